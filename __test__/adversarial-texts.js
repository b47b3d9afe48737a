// Texts a hostile page or a careless tool can return that cost o200k more tokens per byte than
// prose: long runs, base64 (a data URL of a blank PNG), hex, digits, characters of every Unicode
// plane, emoji sequences, control characters. Deterministic (a seeded xorshift), `n` characters
// each or about. Used by __test__/tokens.test.js and `node bench/tokens.js --adversarial`.
'use strict';

const zlib = require('node:zlib');

function xorshift(seed) {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** A blank (all-zero RGBA) PNG of `w` × `h`, stored uncompressed: base64 of it is mostly `A`. */
function blankPng(w, h) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(w, 0);
  header.writeUInt32BE(h, 4);
  header[8] = 8;
  header[9] = 6;
  const raw = Buffer.alloc((w * 4 + 1) * h);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(raw, { level: 0 })), chunk('IEND', Buffer.alloc(0))]);
}

/** { name: text } */
function adversarialTexts(n = 20000) {
  const r = xorshift(12345);
  const pick = (alphabet, count) => Array.from({ length: count }, () => alphabet[Math.floor(r() * alphabet.length)]).join('');
  const codePoints = (lo, hi, count) => Array.from({ length: count }, () => String.fromCodePoint(lo + Math.floor(r() * (hi - lo + 1)))).join('');
  const side = Math.max(8, Math.round(Math.sqrt((n * 3) / 16)));
  return {
    'AAAA…': 'A'.repeat(n),
    'aaaa…': 'a'.repeat(n),
    'abab…': 'ab'.repeat(n / 2),
    'random lowercase run': pick('abcdefghijklmnopqrstuvwxyz', n),
    'random uppercase run': pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ', n),
    'data URL of a blank PNG': `data:image/png;base64,${blankPng(side, side).toString('base64')}`,
    'base64 of random bytes': Buffer.from(Array.from({ length: (n * 3) / 4 }, () => Math.floor(r() * 256))).toString('base64'),
    'zero-filled hex': '0'.repeat(n),
    'random hex': pick('0123456789abcdef', n),
    'random HEX': pick('0123456789ABCDEF', n),
    'random digits': pick('0123456789', n),
    '1111…': '1'.repeat(n),
    'tabs': '\t'.repeat(n),
    'CRLF': '\r\n'.repeat(n / 2),
    'control characters': codePoints(1, 8, n),
    'JSON escapes': '\\"'.repeat(n / 2),
    'CJK unified': codePoints(0x4e00, 0x9fff, n / 4),
    'CJK Extension B (plane 2)': codePoints(0x20000, 0x2a6df, n / 4),
    'CJK Extension G (plane 3)': codePoints(0x30000, 0x3134a, n / 4),
    'Hangul': codePoints(0xac00, 0xd7a3, n / 4),
    'Cyrillic': codePoints(0x430, 0x44f, n / 2),
    'Latin Extended-A': codePoints(0x100, 0x17f, n / 2),
    'C1 controls': codePoints(0x80, 0x9f, n / 2),
    'Devanagari': codePoints(0x905, 0x939, n / 3),
    'Arabic': codePoints(0x627, 0x64a, n / 2),
    'combining marks': 'a' + '\u0301\u0302\u0303\u0304'.repeat(n / 8),
    'math alphanumerics (plane 1)': codePoints(0x1d400, 0x1d7ff, n / 4),
    'emoji': codePoints(0x1f300, 0x1faff, n / 4),
    'emoji ZWJ families': '👨‍👩‍👧‍👦'.repeat(n / 25),
    'flags': '🇫🇷🇩🇪🇯🇵'.repeat(n / 24),
    'skin tones': '👍🏽'.repeat(n / 8),
    'keycaps': '1️⃣'.repeat(n / 7),
    'tags (plane 14)': codePoints(0xe0020, 0xe007f, n / 4),
    'private use (BMP)': codePoints(0xe000, 0xf8ff, n / 3),
    'private use (plane 15)': codePoints(0xf0000, 0xffffd, n / 4),
    'private use (plane 16)': codePoints(0x100000, 0x10fffd, n / 4),
    'symbols and arrows': codePoints(0x2190, 0x23ff, n / 3),
    'zero-width spaces': '\u200b'.repeat(n / 3),
    'uuids': Array.from({ length: Math.ceil(n / 37) }, () => [8, 4, 4, 4, 12].map((k) => pick('0123456789abcdef', k)).join('-')).join(' '),
    'percent-encoding': pick(['%20', '%2F', '%E2%80', 'a', 'b'], n / 2),
  };
}

module.exports = { adversarialTexts, blankPng };
