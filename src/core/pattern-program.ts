// Owns compiling a safe pattern's syntax tree into the NFA program the
// matcher runs (character, split, jump, assertion and match states), and
// counting its states before it is built, so an oversized one is refused.

import type { Assertion, Node } from './pattern-syntax.js';

export const CHAR = 0;
export const SPLIT = 1;
export const JUMP = 2;
export const ASSERT = 3;
export const MATCH = 4;

export const ASSERTIONS: readonly Assertion[] = ['begin', 'end', 'word', 'not_word'];

/** States a node compiles to; Infinity stands for "too many to count". */
export function programSize(node: Node): number {
  switch (node.type) {
    case 'char':
    case 'assert':
      return 1;
    case 'seq':
      return node.items.reduce((total, item) => total + programSize(item), 0);
    case 'alt':
      return node.options.reduce((total, option) => total + programSize(option) + 2, 0);
    case 'repeat': {
      // Every repetition counts at least once, so that "(?:){99999}" is not a free loop.
      const inner = Math.max(programSize(node.node), 1);
      const optional = node.max === Infinity ? inner + 2 : (node.max - node.min) * (inner + 1);
      const total = node.min * inner + optional;
      return Number.isFinite(total) ? total : Infinity;
    }
  }
}

interface Program {
  op: Uint8Array;
  /** CHAR: the atom's index; SPLIT, JUMP: the first target; ASSERT: the assertion's index. */
  x: Int32Array;
  /** SPLIT: the second target. */
  y: Int32Array;
  atoms: string[];
}

export function emitProgram(root: Node): Program {
  const op: number[] = [];
  const x: number[] = [];
  const y: number[] = [];
  const atoms: string[] = [];
  const atomIndex = new Map<string, number>();
  const push = (code: number, first = 0, second = 0) => {
    op.push(code);
    x.push(first);
    y.push(second);
    return op.length - 1;
  };
  const emit = (node: Node): void => {
    switch (node.type) {
      case 'char': {
        let index = atomIndex.get(node.atom);
        if (index === undefined) {
          index = atoms.push(node.atom) - 1;
          atomIndex.set(node.atom, index);
        }
        push(CHAR, index);
        return;
      }
      case 'assert':
        push(ASSERT, ASSERTIONS.indexOf(node.kind));
        return;
      case 'seq':
        node.items.forEach(emit);
        return;
      case 'alt': {
        const jumps: number[] = [];
        node.options.forEach((option, position) => {
          if (position === node.options.length - 1) {
            emit(option);
            return;
          }
          const split = push(SPLIT, op.length + 1);
          emit(option);
          jumps.push(push(JUMP));
          y[split] = op.length;
        });
        for (const jump of jumps) x[jump] = op.length;
        return;
      }
      case 'repeat': {
        for (let count = 0; count < node.min; count++) emit(node.node);
        if (node.max === Infinity) {
          const split = push(SPLIT, op.length + 1);
          emit(node.node);
          push(JUMP, split);
          y[split] = op.length;
        } else {
          const splits: number[] = [];
          for (let count = node.min; count < node.max; count++) {
            splits.push(push(SPLIT, op.length + 1));
            emit(node.node);
          }
          for (const split of splits) y[split] = op.length;
        }
        return;
      }
    }
  };
  emit(root);
  push(MATCH);
  return { op: Uint8Array.from(op), x: Int32Array.from(x), y: Int32Array.from(y), atoms };
}

export function startsWithBegin(node: Node): boolean {
  if (node.type === 'assert') return node.kind === 'begin';
  if (node.type === 'seq') return node.items.length > 0 && startsWithBegin(node.items[0]!);
  if (node.type === 'alt') return node.options.every(startsWithBegin);
  return false;
}
