import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileValidator, formatFieldErrors } from '../../src/core/schema-validator.js';

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['query', 'limit', 'operation'],
  properties: {
    query: { type: 'string', minLength: 1 },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
    operation: { type: 'string', enum: ['add', 'sub'] },
    notify: { type: 'array', items: { type: 'string', format: 'email' } },
    fields: {
      type: 'object',
      additionalProperties: false,
      properties: { due_on: { type: 'string', format: 'date' }, assignee: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    },
  },
};

describe('schema validation', () => {
  const validate = compileValidator(schema);

  it('accepts valid input with no errors', () => {
    assert.deepEqual(validate({ query: 'login', limit: 10, operation: 'add', notify: ['a@b.example.com'], fields: { due_on: '2026-03-31', assignee: null } }), []);
  });

  it('collects every field error as a {path, reason} pair, not just the first', () => {
    const errors = validate({ query: '', limit: 'ten', precision: 2, notify: ['not-an-email'], fields: { due_on: '31/03/2026', colour: 'red' } });
    assert.deepEqual(
      errors.map((error) => `${error.path}: ${error.reason}`).sort(),
      [
        'fields.colour: unknown field',
        'fields.due_on: must be a valid date',
        'limit: expected integer, got string',
        'notify[0]: must be a valid email',
        'operation: missing required argument',
        'precision: unknown field',
        'query: must be at least 1 characters',
      ],
    );
  });

  it('reports bounds, enums and a wrong type of the whole value', () => {
    assert.deepEqual(validate({ query: 'x', limit: 0, operation: 'mul' }), [
      { path: 'limit', reason: 'must be >= 1' },
      { path: 'operation', reason: 'must be one of: add, sub' },
    ]);
    assert.deepEqual(validate('a string'), [{ path: '(root)', reason: 'expected object, got string' }]);
  });

  it('reports an anyOf failure once, at its field', () => {
    const errors = validate({ query: 'x', limit: 1, operation: 'add', fields: { assignee: 7 } });
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.path, 'fields.assignee');
  });

  it('can report JSON pointers instead of dotted paths', () => {
    const pointers = compileValidator(schema, { pointers: true });
    assert.deepEqual(pointers({ query: 'x', limit: 1, operation: 'add', notify: [3] }), [{ path: '/notify/0', reason: 'expected string, got integer' }]);
  });

  it('formats errors as one readable line', () => {
    assert.equal(
      formatFieldErrors([
        { path: 'limit', reason: 'expected integer, got string' },
        { path: 'operation', reason: 'missing required argument' },
      ]),
      'limit: expected integer, got string; operation: missing required argument',
    );
  });
});
