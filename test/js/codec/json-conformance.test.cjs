'use strict';
/*
 * JSON conformance (RFC 8259), case by case. Valid documents decode to what
 * JSON.parse gives (Object.is on every number, lone surrogates kept);
 * invalid ones throw ERR_SYNTAX at the exact byte offset where the text
 * stops being a prefix of any valid document (the input's length when it
 * just ends too soon). Invalid UTF-8 can only be given as bytes: a JS string
 * is UTF-8-encoded by JS before the core sees it.
 *
 * Plain JSON only: a first key starting with "$" is a darmok tag
 * (docs/FORMAT.md), so no document here has one.
 */
const { test } = require('node:test');
const { assert, haveWasm } = require('../helpers.cjs');
const { decodeEntity, DarmokError } = require('../../../js/index.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built';
const b = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

/* name -> JSON text (a string, or bytes) that JSON.parse accepts. */
const valid = {
  // RFC 8259 section 7: every escape
  'every two-character escape': '"\\" \\\\ \\/ \\b \\f \\n \\r \\t"',
  'unicode escapes, lower and upper hex': '"\\u0000\\u001f\\u0041\\u00e9\\u00E9\\u20ac\\u20AC\\uffff\\uFFFF\\u0020"',
  'escaped NUL in a key': '{"a\\u0000b":1}',
  'surrogate pair escape': '"\\ud83d\\ude00"',
  'surrogate pair escape, upper case': '"\\uD83D\\uDE00"',
  'lone high surrogate escape': '"\\ud800"',
  'lone low surrogate escape': '"\\udc00"',
  'low then high: two lone surrogates': '"\\udc00\\ud800"',
  'high surrogate then a non-surrogate escape': '"\\ud800\\u0041"',
  'high surrogate then a character': '"\\ud800x"',
  'two highs then a low': '"\\ud800\\ud800\\udc00"',
  'high surrogate at the end of a key': '{"k\\ud800":1}',
  // raw UTF-8
  'raw 2-, 3- and 4-byte UTF-8': '"\u00e9\u20ac\ud83d\ude00"',
  'raw U+2028, U+2029, DEL': '"\u2028\u2029\u007f"',
  'raw noncharacters U+FFFE, U+FFFF': '"\ufffe\uffff"',
  'raw U+10FFFF (F4 8F BF BF)': b('"', [0xf4, 0x8f, 0xbf, 0xbf], '"'),
  'raw U+0080 and U+07FF, U+0800, U+D7FF, U+E000': '"\u0080\u07ff\u0800\ud7ff\ue000"',
  // numbers at the limits of double
  'zero': '0',
  'negative zero': '-0',
  'negative zero with fraction and exponent': '[-0.0,-0e0,-0E-5,0e10,0.0]',
  'largest double': '1.7976931348623157e308',
  'rounds down to the largest double': '1.7976931348623158e308',
  'overflows to Infinity': '[1.7976931348623159e308,1e309,-1e309,1e99999]',
  'smallest subnormal': '5e-324',
  'rounds up to the smallest subnormal': '3e-324',
  'just below half the smallest subnormal: zero': '2.4703282292062327e-324',
  'just above half the smallest subnormal': '2.4703282292062328e-324',
  'underflows to zero and negative zero': '[1e-400,-1e-400,1e-99999]',
  'smallest normal': '2.2250738585072014e-308',
  'the PHP-hang number': '2.2250738585072011e-308',
  'largest subnormal': '2.2250738585072009e-308',
  '2^53 + 1 rounds to even': '9007199254740993',
  'int32 edges': '[2147483647,2147483648,-2147483648,-2147483649,4294967295,4294967296]',
  'long integer': '123456789012345678901234567890',
  'many digits': '3.14159265358979323846264338327950288419716939937510582097494459',
  'a thousand digits': `${'9'.repeat(1000)}.5`,
  'long fraction of zeros': `0.${'0'.repeat(1000)}1e1000`,
  'exponent with leading zeros': '[1e0000000000000000000001,1E-0000000000000000000002,1e+00]',
  'exponent forms': '[1E2,1e+2,1e-2,1E+2,-1.5e-10,100e-2,0.1,1.0,10000000000,0.000001,1e-7,1e21,1e22,1e23]',
  'exactly representable decimals': '[0.5,0.25,0.125,1e22,1e-22,4503599627370496.5]',
  'halfway cases': '[9007199254740993,9007199254740995,1.00000000000000011102230246251565404236316680908203125]',
  // structure
  'empty containers': '[[],{},[[]],{"a":{}},[{}]]',
  'scalars at the top level': '[true,false,null,"s",1]',
  'top-level string': '"just a string"',
  'top-level literal': 'null',
  'duplicate keys: the last wins': '{"a":1,"a":2,"b":{"c":1,"c":[2]}}',
  'unicode keys': '{"\u00e9":1,"\ud83d\ude00":2,"":3," ":4}',
  'keys that look like numbers': '{"1":1,"0":0,"-1":-1,"01":1}',
  'whitespace variety': ' \t\n\r[ \t\n\r1 \t\n\r, \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r2 \t\n\r} \t\n\r, \t\n\r"x" \t\n\r] \t\n\r',
  'no whitespace at all': '{"a":[1,{"b":null}],"c":"d"}',
  'deep but legal nesting: 1000 arrays': `${'['.repeat(999)}[1]${']'.repeat(999)}`,
  'deep but legal nesting: 1000 objects': `${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`,
  'deep mixed nesting': `${'[{"a":'.repeat(500)}1${'}]'.repeat(500)}`,
  'wide array': `[${Array.from({ length: 100000 }, (_, i) => i).join(',')}]`,
  'wide object': `{${Array.from({ length: 20000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  // large strings
  'a 1 MB ASCII string': `"${'a'.repeat(1 << 20)}"`,
  'a 2 MB string of two-byte characters': `"${'\u00e9'.repeat(1 << 20)}"`,
  'a string of 100,000 escapes': `"${'\\n\\u00e9\\ud83d\\ude00'.repeat(25000)}"`,
  'a string of 100,000 emoji': `"${'\ud83d\ude00'.repeat(100000)}"`
};

/* name -> [JSON text (a string, or bytes), offset of the ERR_SYNTAX]. */
const invalid = {
  // structure
  'empty input': ['', 0],
  'only whitespace': [' \t\n\r', 4],
  'trailing comma in an array': ['[1,]', 3],
  'trailing comma in an object': ['{"a":1,}', 7],
  'double comma': ['[1,,2]', 3],
  'leading comma': ['[,1]', 1],
  'comma in an empty object': ['{,}', 1],
  'missing comma': ['[1 2]', 3],
  'missing colon': ['{"a" 1}', 5],
  'missing value': ['{"a":}', 5],
  'unquoted key': ['{a:1}', 1],
  'number as a key': ['{1:1}', 1],
  'closing bracket mismatch': ['[1}', 2],
  'closing brace mismatch': ['{"a":1]', 6],
  'extra closing bracket': ['[]]', 2],
  'junk after the value': ['{}x', 2],
  'a second value': ['1 2', 2],
  'two arrays': ['[] []', 3],
  'two strings': ['"a""b"', 3],
  'NUL after the value': ['[1]\u0000', 3],
  // truncated input
  'unclosed array': ['[', 1],
  'unclosed object': ['{', 1],
  'unclosed object after a member': ['{"a":1', 6],
  'unclosed array after an item': ['[1', 2],
  'unclosed string': ['"abc', 4],
  'unclosed key': ['{"ab', 4],
  'backslash at the end': ['"\\', 2],
  'truncated \\u escape': ['"\\u12', 5],
  'truncated literal': ['tru', 3],
  'truncated number': ['-', 1],
  'truncated exponent': ['1e+', 3],
  // numbers
  'leading zero': ['01', 1],
  'negative leading zero': ['-01', 2],
  'double zero': ['00', 1],
  'leading zero in an array': ['[01]', 2],
  'trailing dot': ['1.', 2],
  'leading dot': ['.5', 0],
  'dot then exponent': ['1.e5', 2],
  'empty exponent': ['1e', 2],
  'plus sign': ['+1', 0],
  'minus then space': ['- 1', 1],
  'hex': ['0x10', 1],
  'underscore separator': ['1_000', 1],
  'NaN literal': ['NaN', 0],
  'Infinity literal': ['Infinity', 0],
  'negative Infinity literal': ['-Infinity', 1],
  'lower-case nan': ['nan', 1],
  // literals
  'capitalised True': ['True', 0],
  'undefined literal': ['undefined', 0],
  'truncated null': ['nul', 3],
  'literal with junk': ['truex', 4],
  'literal with a wrong letter': ['fals3', 4],
  // strings
  'single-quoted string': ["'a'", 0],
  'single-quoted key': ["{'a':1}", 1],
  'raw NUL in a string': ['"a\u0000b"', 2],
  'raw U+0001 in a string': ['"\u0001"', 1],
  'raw newline in a string': ['"a\nb"', 2],
  'raw tab in a string': ['"a\tb"', 2],
  'raw U+001F in a key': ['{"\u001f":1}', 2],
  'bad escape \\x': ['"\\x41"', 2],
  'bad escape \\U': ['"\\U0041"', 2],
  'bad escape \\\'': ['"\\\'"', 2],
  'bad escape \\0': ['"\\0"', 2],
  'bad escape \\a': ['"\\a"', 2],
  '\\u with a non-hex digit': ['"\\u12G4"', 5],
  '\\u with three digits': ['"\\u123"', 6],
  '\\u with no digits': ['"\\uZZZZ"', 3],
  // comments
  'block comment before the value': ['/* c */1', 0],
  'line comment after the value': ['1 // c', 2],
  'comment inside an array': ['[1,/*x*/2]', 3],
  'hash comment': ['# c\n1', 0],
  // whitespace JSON does not allow
  'BOM': [b([0xef, 0xbb, 0xbf], '1'), 0],
  'BOM as a JS string': ['\ufeff1', 0],
  'no-break space': ['\u00a01', 0],
  'form feed': ['\f1', 0],
  'vertical tab': ['\u000b1', 0],
  'U+2028 outside a string': ['[1,\u20282]', 3],
  // invalid UTF-8 (bytes only)
  'lone continuation byte 0x80': [b('"', [0x80], '"'), 1],
  'lone continuation byte 0xBF': [b('"', [0xbf], '"'), 1],
  'lone continuation byte in a key': [b('{"a', [0x80], '":1}'), 3],
  'byte 0xFF': [b('"', [0xff], '"'), 1],
  'byte 0xFE': [b('"', [0xfe], '"'), 1],
  'overlong 2-byte C0 AF': [b('"', [0xc0, 0xaf], '"'), 1],
  'overlong 2-byte C1 BF': [b('"', [0xc1, 0xbf], '"'), 1],
  'overlong 3-byte E0 80 AF': [b('"', [0xe0, 0x80, 0xaf], '"'), 2],
  'overlong 4-byte F0 80 80 AF': [b('"', [0xf0, 0x80, 0x80, 0xaf], '"'), 2],
  'encoded surrogate ED A0 80': [b('"', [0xed, 0xa0, 0x80], '"'), 2],
  'encoded surrogate pair ED A0 BD ED B8 80': [b('"', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], '"'), 2],
  'above U+10FFFF (F4 90 80 80)': [b('"', [0xf4, 0x90, 0x80, 0x80], '"'), 2],
  '5-byte lead F8': [b('"', [0xf8, 0x88, 0x80, 0x80, 0x80], '"'), 1],
  'lead F5': [b('"', [0xf5, 0x80, 0x80, 0x80], '"'), 1],
  'truncated 3-byte sequence': [b('"', [0xe2, 0x82], '"'), 3],
  'truncated 2-byte sequence': [b('"', [0xc3], '"'), 2],
  'truncated sequence at the end of input': [b('"', [0xe2, 0x82]), 3],
  'continuation where a lead is due, after a good sequence': [b('"', [0xc3, 0xa9, 0xa9], '"'), 3],
  'invalid UTF-8 outside a string': [b([0x80]), 0],
  'invalid UTF-8 between items': [b('[1,', [0xff], ']'), 3],
  'a JS string with a lone surrogate outside a string': ['[\ud800]', 1]
};

function throwsSyntax(input, offset) {
  assert.throws(() => decodeEntity(input), (e) => {
    assert.ok(e instanceof DarmokError, String(e));
    assert.strictEqual(e.code, 'ERR_SYNTAX', e.message);
    assert.strictEqual(e.offset, offset, e.message);
    assert.match(e.message, /expected/, 'says what was expected');
    assert.match(e.message, new RegExp(`at byte ${offset}\\b`));
    assert.strictEqual(typeof e.path, 'string');
    assert.ok(e.message.length < 400, 'a short message');
    return true;
  });
}

for (const [name, text] of Object.entries(valid)) {
  test(`valid: ${name}`, { skip }, () => {
    const str = typeof text === 'string' ? text : text.toString('utf8');
    const expected = JSON.parse(str);
    assert.deepStrictEqual(decodeEntity(text), expected);
    if (typeof text === 'string') assert.deepStrictEqual(decodeEntity(Buffer.from(text)), expected);
  });
}

for (const [name, [text, offset]] of Object.entries(invalid)) {
  test(`invalid: ${name}`, { skip }, () => {
    if (typeof text === 'string') {
      assert.throws(() => JSON.parse(text), SyntaxError, 'JSON.parse agrees it is invalid');
    }
    throwsSyntax(text, offset);
  });
}

test('every prefix of a valid document: the same value as JSON.parse, or ERR_SYNTAX at its end', { skip }, () => {
  const doc = ' {"a\\u00e9":[1,-2.5e+3,true,false,null,"x\\"\\ud83d\\ude00\u00e9\u20ac"],"b":{"c":[{},[]]},"d":0.125} ';
  const bytes = Buffer.from(doc);
  for (let n = 0; n <= bytes.length; n++) {
    const prefix = bytes.subarray(0, n);
    let expected;
    let ok = true;
    try {
      expected = JSON.parse(prefix.toString('utf8'));
    } catch {
      ok = false;
    }
    // A prefix cut inside a UTF-8 sequence is not a JS string JSON.parse saw.
    if (ok && Buffer.from(prefix.toString('utf8')).length === n) {
      assert.deepStrictEqual(decodeEntity(prefix), expected, `prefix ${n}`);
    } else {
      throwsSyntax(prefix, n);
    }
  }
});

test('a byte that breaks a valid document at i fails at i, for every i', { skip }, () => {
  const doc = '{"key":[10,"s\\n",true,{"z":null}]}';
  for (let i = 0; i < doc.length; i++) {
    for (const bad of [0x00, 0x01, 0x27, 0x80, 0xff]) {
      const bytes = Buffer.from(doc);
      bytes[i] = bad;
      let jsonOk = true;
      try { JSON.parse(bytes.toString('latin1')); } catch { jsonOk = false; }
      if (jsonOk) continue;
      assert.throws(() => decodeEntity(bytes), (e) => {
        assert.strictEqual(e.code, 'ERR_SYNTAX', `${i}: ${e.message}`);
        assert.ok(e.offset <= i || (bad === 0x27 && e.offset >= i), `byte ${bad} at ${i}: offset ${e.offset}`);
        return true;
      });
    }
  }
});

test('the error says where: offset, path and a short excerpt', { skip }, () => {
  const text = `{"padding":"${'x'.repeat(5000)}","bars":[1,{"baz":{"map":tru}}]}`;
  assert.throws(() => decodeEntity(text), (e) => {
    assert.strictEqual(e.code, 'ERR_SYNTAX');
    assert.strictEqual(e.offset, text.indexOf('tru}') + 3);
    assert.strictEqual(e.path, '$.bars[1].baz.map');
    assert.match(e.message, /^expected true, false or null at byte \d+ in \$\.bars\[1\]\.baz\.map near "/);
    assert.ok(e.message.length < 200, e.message);
    return true;
  });
  const paths = {
    '[1,2,{"a":[x]}]': '$[2].a[0]',
    '{"m":{"$Map":[["k",[1,x]]]}}': '$.m.$Map[0][1][1]',
    '{"s":{"$Set":[1,{"a":"\\q"}]}}': '$.s.$Set[1].a',
    '[{"$hole":5},1,x]': '$[6]',
    '{"$":"Anything","$$x":[nul]}': '$.$x[0]',
    '{"$NullProto":{"a":{"b":[}}}': '$.a.b[0]',
    '{"$Error":{"name":"E","message":"m","cause":{"z":[tx]}}}': '$.cause.z[0]',
    '{"$$a":{"b":y}}': '$.$a.b',
    '{"odd key":{"1":[-]}}': '$["odd key"]["1"][0]',
    '{"a":1} x': '$'
  };
  for (const [doc, path] of Object.entries(paths)) {
    assert.throws(() => decodeEntity(doc), (e) => {
      assert.strictEqual(e.path, path, `${doc}: ${e.message}`);
      return true;
    });
  }
  assert.throws(() => decodeEntity('{"d":{"$Date":"yesterday"}}'), (e) => e.code === 'ERR_FORMAT' && e.path === '$.d');
});
