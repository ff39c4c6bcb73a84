#!/usr/bin/env node
'use strict';
/*
 * darmok's command line (package.json "bin"):
 *   darmok inspect [FILE|-] [--format json|protobuf|auto] [--json]
 *   darmok inspect --redis redis://HOST:PORT KEY [--prefix P] [--format ...] [--json]
 *   darmok convert --to json|protobuf [FILE|-] [--format ...]
 * Exit 0 on success, 1 when the input is not a darmok document (the
 * DarmokError's code, offset and path on stderr) or cannot be read, 2 on a
 * usage error. Arguments are parsed by Node's util.parseArgs.
 */
const { parseArgs } = require('node:util');
const darmok = require('./index.cjs');
const { render } = require('./cli/tree.cjs');
const { unwrap } = require('./cli/envelope.cjs');
const { readInput, readRedis, SourceError } = require('./cli/source.cjs');
const { errorLines } = require('./cli/report.cjs');
const { documentJson, printable } = require('./cli/json-text.cjs');
const { looksLikeProtobuf } = require('./codec/sniff.cjs');
const { visible } = require('./core/errors.cjs');
const { FORMAT_NAMES } = require('./codec/options.cjs');

/*
 * Every flag, declared once: its parseArgs type, the value it takes in the
 * help, and its help lines. COMMANDS says which flags each command takes;
 * the parser and the help are made from both.
 */
const FLAGS = {
  to: { type: 'string', value: FORMAT_NAMES.join('|'), doc: ['the output format (required)'] },
  format: {
    type: 'string',
    value: [...FORMAT_NAMES, 'auto'].join('|'),
    doc: ["the input's format (default auto: a darmok", 'protobuf document starts 08 01, then 12, 1a', 'or 22; anything else is read as JSON)']
  },
  json: { type: 'boolean', doc: ['print the document as darmok JSON instead'] },
  redis: { type: 'string', value: 'URL', doc: ['read KEY from this Redis (needs @redis/client)'] },
  prefix: { type: 'string', value: 'P', doc: ["put P before KEY (a cache's key prefix)"] },
  help: { type: 'boolean', short: 'h', doc: ['this help'] }
};

const COMMANDS = {
  inspect: {
    flags: ['format', 'json', 'redis', 'prefix', 'help'],
    usage: `Usage: darmok inspect [FILE|-] [options]
       darmok inspect --redis redis://HOST:PORT KEY [--prefix P] [options]

Prints the document as an indented tree: class keys and versions, Maps,
Sets, Dates, BigInts, binary sizes, references (→ #N), its size and format.
Reads standard input when FILE is - or absent.
`
  },
  convert: {
    flags: ['to', 'format', 'help'],
    usage: `Usage: darmok convert --to ${FLAGS.to.value} [FILE|-] [options]

Transcodes a document to the other format (or the same one, canonical) and
writes it to standard output. Reads standard input when FILE is - or absent.
`
  }
};

/* The help of a command: its usage, then its flags from FLAGS. */
function helpOf(command) {
  const lines = [COMMANDS[command].usage, 'Options:'];
  for (const name of COMMANDS[command].flags) {
    const flag = FLAGS[name];
    const head = `  ${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.value ? ` ${flag.value}` : ''}`;
    flag.doc.forEach((line, i) => lines.push(`${(i === 0 ? head : '').padEnd(32)}${line}`));
  }
  return lines.join('\n') + '\n';
}

const HELP = {
  main: `Usage: darmok <command> [options]

Commands:
  inspect   print a darmok document (JSON or protobuf) as a tree
  convert   transcode a document between JSON and protobuf

darmok <command> --help for a command's options.
`,
  inspect: helpOf('inspect'),
  convert: helpOf('convert')
};

class UsageError extends Error {}

/* 'json' or 'protobuf': as told, or by darmok protobuf's exact signature (sniff.cjs); anything else is read as JSON. */
function formatOf(bytes, option) {
  if (option !== 'auto') return option;
  return looksLikeProtobuf(bytes) ? 'protobuf' : 'json';
}

/* JSON text (bytes) and a newline to out, safe on a terminal (json-text.cjs printable). */
function writeJson(out, bytes) {
  out.write(printable(bytes));
  return out.write('\n');
}

function painter(stream) {
  const env = process.env;
  const on = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0'
    ? true
    : stream.isTTY === true && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  const CODES = { class: 36, string: 32, number: 33, tag: 35, ref: 31, dim: 2 };
  return on ? (style, text) => `\u001b[${CODES[style]}m${text}\u001b[0m` : (style, text) => text;
}

/* The flags and positionals of command (COMMANDS), or null for --help. */
function options(command, args) {
  const spec = {};
  for (const name of COMMANDS[command].flags) {
    spec[name] = FLAGS[name].short ? { type: FLAGS[name].type, short: FLAGS[name].short } : { type: FLAGS[name].type };
  }
  let parsed;
  try {
    parsed = parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err.message);
  }
  if (parsed.values.help) return null;
  const format = parsed.values.format ?? 'auto';
  if (![...FORMAT_NAMES, 'auto'].includes(format)) {
    throw new UsageError(`--format must be ${FORMAT_NAMES.join(', ')} or auto, not ${format}`);
  }
  parsed.values.format = format;
  return parsed;
}

async function inspect(args, out) {
  const parsed = options('inspect', args);
  if (parsed === null) return out.write(HELP.inspect);
  const { values, positionals } = parsed;
  let bytes;
  let where;
  if (values.redis !== undefined) {
    if (positionals.length !== 1) throw new UsageError('inspect --redis takes one KEY');
    const key = (values.prefix ?? '') + positionals[0];
    bytes = await readRedis(values.redis, key);
    where = `key ${JSON.stringify(key)}`;
  } else {
    if (values.prefix !== undefined) throw new UsageError('--prefix goes with --redis');
    if (positionals.length > 1) throw new UsageError('inspect takes one FILE');
    bytes = readInput(positionals[0]);
    where = positionals[0] === undefined || positionals[0] === '-' ? 'stdin' : positionals[0];
  }
  const entry = unwrap(bytes);
  if (entry !== null) bytes = entry.document;
  const format = entry !== null && values.format === 'auto' ? entry.format : formatOf(bytes, values.format);
  if (values.json) return writeJson(out, documentJson(bytes, format));
  const paint = painter(out);
  const tree = render(bytes, format, paint);
  const lines = [paint('dim', `${visible(where)}: darmok ${format} document, ${bytes.length} bytes`)];
  if (entry !== null) {
    lines.push('envelope:');
    for (const [name, value] of entry.fields) lines.push(`  ${name}: ${visible(value)}`);
    lines.push('document:');
  }
  for (const line of tree) lines.push(line);
  return out.write(lines.join('\n') + '\n');
}

function convert(args, out) {
  const parsed = options('convert', args);
  if (parsed === null) return out.write(HELP.convert);
  const { values, positionals } = parsed;
  if (!FORMAT_NAMES.includes(values.to)) throw new UsageError(`convert needs ${FORMAT_NAMES.map((f) => `--to ${f}`).join(' or ')}`);
  if (positionals.length > 1) throw new UsageError('convert takes one FILE');
  const bytes = readInput(positionals[0]);
  const from = formatOf(bytes, values.format);
  // JSON as its UTF-8 bytes (bytes: true): no string of the document is made.
  let result;
  if (from === values.to) {
    // Through the other format and back: checked, and in canonical form.
    const other = FORMAT_NAMES.find((f) => f !== from);
    result = darmok.transcode(darmok.transcode(bytes, { from, to: other, bytes: true }), { from: other, to: from, bytes: true });
  } else {
    result = darmok.transcode(bytes, { from, to: values.to, bytes: true });
  }
  return values.to === 'json' ? writeJson(out, result) : out.write(result);
}

async function main(argv) {
  const [command, ...args] = argv;
  const commands = { inspect, convert };
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(HELP.main);
      return command === undefined ? 2 : 0;
    }
    if (!Object.hasOwn(commands, command)) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    await commands[command](args, process.stdout);
    return 0;
  } catch (err) {
    const name = `darmok${commands[command] ? ' ' + command : ''}`;
    // Every message may quote the input (a file name, a key, a document): shown through visible().
    if (err instanceof UsageError) {
      process.stderr.write(`${name}: ${visible(err.message)}\n\n${HELP[commands[command] ? command : 'main']}`);
      return 2;
    }
    if (err instanceof darmok.DarmokError) {
      process.stderr.write(errorLines(name, err).join('\n') + '\n');
      return 1;
    }
    if (err instanceof SourceError || (err && typeof err.code === 'string' && err.syscall)) {
      process.stderr.write(`${name}: ${visible(String(err.message))}\n`);
      return 1;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
