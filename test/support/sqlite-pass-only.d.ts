// Types of sqlite-pass-only.js (plain JavaScript: the test sequencer reads it before any transform).
export declare const SQLITE_PASS_ONLY: Readonly<Record<string, string>>;
