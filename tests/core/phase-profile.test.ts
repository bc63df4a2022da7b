import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enterPhase, exitPhase, inPhase, startProfile, stopProfile } from '../../src/core/phase-profile.js';

describe('phase profile', () => {
  it('reads no clock and charges nothing while off', () => {
    let reads = 0;
    startProfile(() => reads++);
    stopProfile();
    reads = 0;
    enterPhase('validation');
    exitPhase('validation');
    assert.equal(inPhase('writing', () => 7), 7);
    assert.equal(reads, 0);
  });

  it('charges time to the innermost open phase, apart inside replay', () => {
    let now = 0;
    startProfile(() => now);
    now += 1; // other
    enterPhase('episode');
    now += 2;
    enterPhase('validation');
    now += 3;
    exitPhase('validation');
    enterPhase('replay');
    now += 4;
    enterPhase('validation');
    now += 5;
    exitPhase('validation');
    exitPhase('replay');
    exitPhase('episode');
    const profile = stopProfile();
    assert.equal(profile.generate.other, 1);
    assert.equal(profile.generate.episode, 2);
    assert.equal(profile.generate.validation, 3);
    assert.equal(profile.replay.replay, 4);
    assert.equal(profile.replay.validation, 5);
    assert.equal(profile.counts.validation, 2);
    assert.equal(profile.tangled, false);
  });

  it('says so when hooks do not nest', () => {
    startProfile(() => 0);
    enterPhase('episode');
    enterPhase('validation');
    exitPhase('episode');
    assert.equal(stopProfile().tangled, true);
  });
});
