'use strict';
/*
 * report.cjs - how the CLI shows a DarmokError on stderr: its code,
 * message, offset and path, every text of the input in them through
 * visible() (errors.cjs), so a hostile document cannot drive the terminal
 * through an error either.
 */
const { visible } = require('../core/errors.cjs');

/* The lines that report err (a DarmokError) for the command called name. */
function errorLines(name, err) {
  const lines = [`${name}: ${err.code}: ${visible(err.message)}`];
  if (err.offset !== undefined) lines.push(`  offset: ${err.offset}`);
  if (err.path !== undefined) lines.push(`  path: ${visible(err.path)}`);
  return lines;
}

module.exports = { errorLines };
