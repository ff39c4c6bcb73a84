'use strict';
/*
 * json.cjs - darmok's JSON format (docs/FORMAT.md) over the default
 * registry: the codec createCodec({ format: 'json' }) (codec.cjs), plus
 * serializable, createCodec, createRegistry, transcode (JSON <-> protobuf),
 * init and DarmokError.
 */

module.exports = require('./codec.cjs').entryPoint('json');
