import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJsonObject, parseJson, parseJsonPrefix, pythonJson, pythonJsonIndented } from '../../../src/models/codecs/python-json.js';

// Every expected string is what CPython's json.dumps prints for the same value.
describe('python json: json.dumps(value, ensure_ascii=False)', () => {
  it('separates items with ", " and keys with ": ", keeping insertion order', () => {
    assert.equal(pythonJson({ z: 1, a: [1, 2, { c: null }], m: true, b: false }), '{"z": 1, "a": [1, 2, {"c": null}], "m": true, "b": false}');
    assert.equal(pythonJson([[], {}, [[]], { a: {} }]), '[[], {}, [[]], {"a": {}}]');
    assert.equal(pythonJson({}), '{}');
    assert.equal(pythonJson([]), '[]');
  });

  it('writes numbers: integers as integers, floats as JavaScript prints them', () => {
    assert.equal(pythonJson([0, -3, 4821, 1.5, -0.25, 12345678901234]), '[0, -3, 4821, 1.5, -0.25, 12345678901234]');
    assert.equal(pythonJson([NaN, Infinity, -Infinity]), '[NaN, Infinity, -Infinity]');
  });

  it('keeps non-ASCII text as it is', () => {
    assert.equal(pythonJson({ title: 'café — 日本語 😀' }), '{"title": "café — 日本語 😀"}');
    assert.equal(pythonJson('\u2028\u2029\u007f'), '"\u2028\u2029\u007f"');
  });

  it('escapes quotes, backslashes and control characters like Python', () => {
    assert.equal(pythonJson('say "hi"\n\tand \\ back\r\b\f'), String.raw`"say \"hi\"\n\tand \\ back\r\b\f"`);
    assert.equal(pythonJson('\u0000\u0001\u001b\u001f '), String.raw`"\u0000\u0001\u001b\u001f "`);
    assert.equal(pythonJson({ 'a "key"\n': 1 }), String.raw`{"a \"key\"\n": 1}`);
    assert.equal(pythonJson('</script>/'), '"</script>/"');
  });

  it('escapes a lone surrogate, which no UTF-8 encoder could write', () => {
    assert.equal(pythonJson('a\ud800b\udc00'), String.raw`"a\ud800b\udc00"`);
    assert.equal(pythonJson('\ud83d\ude00'), '"😀"');
  });

  it('skips undefined object members and writes undefined list items as null, like JSON.stringify', () => {
    assert.equal(pythonJson({ a: undefined, b: [undefined, 1] }), '{"b": [null, 1]}');
  });

  it('refuses what JSON cannot hold', () => {
    assert.throws(() => pythonJson(undefined), TypeError);
    assert.throws(() => pythonJson({ f: () => 1 }), TypeError);
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    assert.throws(() => pythonJson(cycle), /cycle/);
  });

  it('writes a value shared by two branches twice (it is not a cycle)', () => {
    const shared = { n: 1 };
    assert.equal(pythonJson({ a: shared, b: shared }), '{"a": {"n": 1}, "b": {"n": 1}}');
  });
});

describe('python json: json.dumps(value, indent=4, ensure_ascii=False)', () => {
  it('puts each item on its own line, "," at line ends, empty containers closed in place', () => {
    const value = { a: {}, b: [], c: [1, { d: 'x' }], e: { f: [], g: 'é' } };
    assert.equal(
      pythonJsonIndented(value),
      '{\n' +
        '    "a": {},\n' +
        '    "b": [],\n' +
        '    "c": [\n' +
        '        1,\n' +
        '        {\n' +
        '            "d": "x"\n' +
        '        }\n' +
        '    ],\n' +
        '    "e": {\n' +
        '        "f": [],\n' +
        '        "g": "é"\n' +
        '    }\n' +
        '}',
    );
  });

  it('writes empty containers and scalars at the top level as they are', () => {
    assert.equal(pythonJsonIndented({}), '{}');
    assert.equal(pythonJsonIndented([]), '[]');
    assert.equal(pythonJsonIndented('a\nb'), String.raw`"a\nb"`);
    assert.equal(pythonJsonIndented([[]]), '[\n    []\n]');
  });

  it('takes another indent width', () => {
    assert.equal(pythonJsonIndented({ a: [1] }, 2), '{\n  "a": [\n    1\n  ]\n}');
  });
});

describe('python json: parsing what a model wrote', () => {
  it('reads every JSON value the way JSON.parse does', () => {
    const texts = [
      '{"a": [1, -2.5e3, true, false, null], "b": {"c": "d"}}',
      String.raw`"esc: \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`,
      ' [ ] ',
      '0',
      '-0.5E-2',
      '{"a": 1, "a": 2}',
    ];
    for (const text of texts) assert.deepEqual(parseJson(text), { ok: true, value: JSON.parse(text) as unknown }, text);
  });

  it('keeps a "__proto__" key as a member, not a prototype', () => {
    const parsed = parseJson('{"__proto__": {"polluted": true}}');
    assert.ok(parsed.ok);
    assert.deepEqual(Object.keys(parsed.value as object), ['__proto__']);
    assert.equal(Object.getPrototypeOf(parsed.value), Object.prototype);
    assert.equal((parsed.value as { polluted?: unknown }).polluted, undefined);
  });

  it('says where the text broke, in words that do not depend on the Node version', () => {
    const failures: [string, string][] = [
      ['{"a": }', 'unexpected "}" at offset 6'],
      ['{"a": 1', 'unexpected end of input'],
      ['{"a": 1} x', 'unexpected text after the JSON value at offset 9'],
      ['{a: 1}', 'unexpected "a" at offset 1'],
      ['[1, 2,]', 'unexpected "]" at offset 6'],
      [String.raw`"a\qb"`, String.raw`invalid escape "\\q" at offset 2`],
      [String.raw`"\u12"`, String.raw`invalid escape "\\u12\"" at offset 1`],
      ['"line\nbreak"', String.raw`unescaped control character "\n" in a string at offset 5`],
      ['"open', 'unexpected end of input inside a string'],
      ['tru', 'invalid literal at offset 0'],
      ['-', 'invalid number at offset 0'],
      ['01', 'unexpected text after the JSON value at offset 1'],
      ['', 'unexpected end of input'],
    ];
    for (const [text, error] of failures) assert.deepEqual(parseJson(text), { ok: false, error }, text);
  });

  it('refuses nesting deep enough to exhaust the stack', () => {
    const parsed = parseJson('['.repeat(10_000) + ']'.repeat(10_000));
    assert.equal(parsed.ok, false);
    assert.match(parsed.ok ? '' : parsed.error, /^nesting deeper than 512/);
  });

  it('reads one value at the start of a text and says where it ended', () => {
    assert.deepEqual(parseJsonPrefix('  {"a": 1}; {"b": 2}'), { ok: true, value: { a: 1 }, end: 10 });
  });

  it('decodes an object, or a string that holds one, and nothing else', () => {
    assert.deepEqual(decodeJsonObject({ a: 1 }), { a: 1 });
    assert.deepEqual(decodeJsonObject('{"a": 1}'), { a: 1 });
    assert.equal(decodeJsonObject('[1]'), undefined);
    assert.equal(decodeJsonObject('not json'), undefined);
    assert.equal(decodeJsonObject([1]), undefined);
    assert.equal(decodeJsonObject(null), undefined);
  });
});
