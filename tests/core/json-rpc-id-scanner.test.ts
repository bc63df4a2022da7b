// The id of a JSON-RPC message read without parsing it: only the top-level
// "id", whatever the nesting, the strings or the way the bytes are cut.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonRpcIdScanner, scanJsonRpcId } from '../../src/core/json-rpc-id-scanner.js';

const scan = (text: string) => scanJsonRpcId(Buffer.from(text, 'utf8'));

describe('json-rpc id scanner', () => {
  it('reads a number or a string id at the top level, wherever it stands', () => {
    assert.equal(scan('{"jsonrpc":"2.0","id":7,"method":"tools/list"}'), 7);
    assert.equal(scan('{"jsonrpc":"2.0","method":"tools/call","params":{"id":1,"arguments":{"id":2}},"id":"last"}'), 'last');
    assert.equal(scan('{ "id" : -12.5e1 }'), -125);
    assert.equal(scan('{"id":"a \\"quoted\\" }, id, ]","method":"x"}'), 'a "quoted" }, id, ]');
    assert.equal(scan('{"name":"ünïcödé ✓ 𝄞","id":3}'), 3);
    assert.equal(scan('{"\\u0069d":4}'), 4, 'an escaped key is the same key');
    assert.equal(scan('{"id":1,"id":2}'), 2, 'the last one wins, as with JSON.parse');
  });

  it('finds no id where there is none to answer', () => {
    assert.equal(scan('{"params":{"id":1},"method":"x"}'), null, 'an id below the top level');
    assert.equal(scan('[{"id":1}]'), null, 'an array');
    assert.equal(scan('{"id":null}'), null);
    assert.equal(scan('{"id":{"a":1}}'), null);
    assert.equal(scan('{"id":[1]}'), null);
    assert.equal(scan('{"id":true}'), null);
    assert.equal(scan(`{"id":"${'x'.repeat(300)}"}`), null, 'too long to echo');
    assert.equal(scan('{"identity":5}'), null);
    assert.equal(scan('not json'), null);
  });

  it('reads past any depth and any cut, holding nothing', () => {
    const deep = `{"method":"tools/call","params":{"arguments":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}},"id":42}`;
    assert.equal(scan(deep), 42);
    assert.equal(scan('{"id":5,"method":"x","params":{"a":'), 5, 'a torn message still names its id');
    const bytes = Buffer.from('{"method":"x","params":{"text":"é}\\"","id":9},"id":"é-1"}', 'utf8');
    const scanner = new JsonRpcIdScanner();
    for (const byte of bytes) scanner.feed(Uint8Array.of(byte));
    assert.equal(scanner.id, 'é-1');
  });
});
