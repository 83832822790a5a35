import { describe, expect, it } from '@jest/globals';
import { outcomeOf, parseRule, winnerOf } from './event-rule.js';

describe('sports event rules', () => {
  it('HOME_WINS: YES on a home win only (an away win or a draw is NO)', () => {
    expect(outcomeOf('HOME_WINS', 3, 1)).toBe('YES');
    expect(outcomeOf('HOME_WINS', 1, 3)).toBe('NO');
    expect(outcomeOf('HOME_WINS', 2, 2)).toBe('NO');
  });

  it('AWAY_WINS: YES on an away win only', () => {
    expect(outcomeOf('AWAY_WINS', 0, 1)).toBe('YES');
    expect(outcomeOf('AWAY_WINS', 1, 0)).toBe('NO');
    expect(outcomeOf('AWAY_WINS', 0, 0)).toBe('NO');
  });

  it('OVER_<n>: YES when the total is more than n', () => {
    expect(outcomeOf('OVER_2', 2, 1)).toBe('YES');
    expect(outcomeOf('OVER_2', 1, 1)).toBe('NO');
    expect(outcomeOf('OVER_0', 0, 0)).toBe('NO');
  });

  it('parses only the rules it knows', () => {
    expect(parseRule('HOME_WINS')).toBe('HOME_WINS');
    expect(parseRule('OVER_215')).toBe('OVER_215');
    for (const bad of [
      'OVER_',
      'OVER_02',
      'OVER_-1',
      'OVER_1000',
      'home_wins',
      '',
      null,
      undefined,
    ]) {
      expect(parseRule(bad)).toBeNull();
    }
  });

  it('names the winner, or a draw', () => {
    expect(winnerOf(2, 1)).toBe('HOME');
    expect(winnerOf(1, 2)).toBe('AWAY');
    expect(winnerOf(0, 0)).toBe('DRAW');
  });
});
