'use strict';
// Node's fs and path for load.cjs on Nodes without process.getBuiltinModule
// (before 20.16). Bundlers for the browser replace this file with an empty
// module (package.json "browser"), so no browser bundle asks for fs.
module.exports = { fs: require('fs'), path: require('path') };
