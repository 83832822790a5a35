import type { Outcome } from '../markets/entities/market.entity.js';

/** Who won a finished event. */
export type Winner = 'HOME' | 'AWAY' | 'DRAW';

/**
 * How a final score resolves a linked market: HOME_WINS (YES when home scored more), AWAY_WINS
 * (YES when away scored more), OVER_<n> (YES when home + away is more than n; OVER_2 is "more
 * than 2.5 goals"). A draw is NO for both HOME_WINS and AWAY_WINS.
 */
export type EventRule = 'HOME_WINS' | 'AWAY_WINS' | `OVER_${number}`;

const OVER = /^OVER_(0|[1-9]\d{0,2})$/;

/** The rule a stored or seeded spelling names, or null when it names none. */
export function parseRule(value: string | null | undefined): EventRule | null {
  if (value === 'HOME_WINS' || value === 'AWAY_WINS') return value;
  if (value !== null && value !== undefined && OVER.test(value)) return value as EventRule;
  return null;
}

export function winnerOf(home: number, away: number): Winner {
  if (home > away) return 'HOME';
  return away > home ? 'AWAY' : 'DRAW';
}

/** The outcome a final score gives a market resolved by `rule`. */
export function outcomeOf(rule: EventRule, home: number, away: number): Outcome {
  if (rule === 'HOME_WINS') return home > away ? 'YES' : 'NO';
  if (rule === 'AWAY_WINS') return away > home ? 'YES' : 'NO';
  const line = Number(rule.slice('OVER_'.length));
  return home + away > line ? 'YES' : 'NO';
}
