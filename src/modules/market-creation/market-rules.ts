/** How many markets a user may hold open (OPEN or HALTED) in the paper world at once. */
export const MAX_OPEN_PAPER_MARKETS = 20;

/** A created market's slug: lower-case letters, digits and hyphens, 3..80 of them. */
export const SLUG_PATTERN = /^[a-z0-9-]{3,80}$/;

/** Where the house quotes a new paper market when no reference_price is given. */
export const DEFAULT_REFERENCE_PRICE = 50;

export const MAX_TITLE_LENGTH = 300;
export const MAX_DESCRIPTION_LENGTH = 5000;
