import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderDeep, renderString, renderTemplate, TemplateError, templateRoots } from '../../src/core/template.js';

const context = {
  target: { number: 4821, title: 'Login: loop', labels: ['bug', 'security'] },
  found: { issues: [{ number: 1 }, { number: 22 }] },
};

describe('templates', () => {
  it('keeps the type of a lone expression', () => {
    assert.equal(renderTemplate('{{target.number}}', context), 4821);
    assert.deepEqual(renderTemplate('{{ target.labels }}', context), ['bug', 'security']);
  });

  it('renders text, joining lists and mapping with *', () => {
    assert.equal(renderString('#{{target.number}} ({{target.labels}})', context), '#4821 (bug, security)');
    assert.equal(renderString('found {{found.issues.*.number}}', context), 'found 1, 22');
    assert.equal(renderString('{{found.issues.1.number}}', context), '22');
  });

  it('names the expression and the reason when a path does not resolve', () => {
    assert.throws(() => renderString('{{target.assignee}}', context), (error: unknown) => error instanceof TemplateError && /target.assignee.*no field "assignee"/.test(error.message));
    assert.throws(() => renderString('{{missing.x}}', context), /unknown name "missing"/);
    assert.throws(() => renderString('{{found.issues.9.number}}', context), /index 9 past the end/);
  });

  it('leaves references to names it does not know for a later stage when partial', () => {
    const rendered = renderDeep({ number: '{{target.number}}', text: 'see {{later.id}} on #{{target.number}}', keep: '{{later.id}}' }, context, { partial: true });
    assert.deepEqual(rendered, { number: 4821, text: 'see {{later.id}} on #4821', keep: '{{later.id}}' });
  });

  it('never evaluates a world value that happens to contain a template', () => {
    const world = { target: { title: 'Docs: explain {{found.secret}} syntax', labels: ['{{x}}'] } };
    const stage1 = renderDeep({ text: 'About "{{target.title}}"', all: '{{target}}', later: '{{found.id}}' }, world, { partial: true }) as Record<string, unknown>;
    const stage2 = renderDeep(stage1, { found: { id: 7, secret: 'LEAKED' } }) as Record<string, any>;
    assert.equal(stage2.text, 'About "Docs: explain {{found.secret}} syntax"');
    assert.deepEqual(stage2.all, { title: 'Docs: explain {{found.secret}} syntax', labels: ['{{x}}'] });
    assert.equal(stage2.later, 7);
  });

  it('lists the root names a string refers to', () => {
    assert.deepEqual(templateRoots('{{a.b}} and {{c}} and {{a.d}}'), ['a', 'c', 'a']);
    assert.throws(() => templateRoots('{{1abc}}'), TemplateError);
  });
});
