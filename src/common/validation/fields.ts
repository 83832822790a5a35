import { Transform } from 'class-transformer';
import { Matches, ValidateBy, ValidateIf } from 'class-validator';

/**
 * An optional body or query field: when it is absent its validators are skipped, but `null` is
 * validated like any value (and so refused by IsString, IsArray, IsInt...). class-validator's own
 * IsOptional lets null through, which reached the services as a value they never expect.
 */
export function OptionalField(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/**
 * A query parameter that must be a plain decimal integer: "10" becomes 10, anything else ("0x10",
 * " 1", "1e3", "1.0") stays a string and fails IsInt with 400 VALIDATION_FAILED (Number() would
 * read "0x10" as 16 and "  1" as 1).
 */
export function DecimalIntegerQuery(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value,
  );
}

/**
 * Characters a name or note shown to people may not hold: C0 and C1 control characters (NUL,
 * ESC, ...), the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), which
 * make a dashboard show text other than what is stored, and the byte order mark U+FEFF (an
 * invisible zero-width no-break space that breaks copying and comparing). Line breaks and tabs
 * are allowed where the text may span lines. (Tag characters stay allowed: emoji subdivision
 * flags are made of them.)
 */
const HIDDEN = /[\p{Cc}\u202a-\u202e\u2066-\u2069\ufeff]/u;

/** What else one line of text may not hold: the line and paragraph separators U+2028, U+2029. */
const LINE_BREAKING = /[\p{Zl}\p{Zp}]/u;

/**
 * One character that shows: not a space or separator, not a control or format character (zero
 * width space and joiners, soft hyphen, word joiner, ...), not a combining mark (alone it shows
 * nothing of its own), not a filler that renders blank (the Hangul fillers, the blank Braille
 * pattern, the Mongolian vowel separator). Joiners and marks stay allowed inside a name that shows
 * something (scripts and emoji sequences need them).
 */
const SHOWS = /[^\s\p{Z}\p{Cc}\p{Cf}\p{M}\u115f\u1160\u180e\u2800\u3164\uffa0]/u;

/**
 * Text shown to people: no control characters, bidi overrides or byte order mark. A one-line text
 * (a name) also holds no line or paragraph separator (U+2028, U+2029) and must show something; a multi-line note (a description, a reason) may be empty, and with
 * `showsUnlessEmpty` (a bio) it is either empty or shows something (never only invisible
 * characters, which would read as blank while not being empty).
 */
export function PlainText(
  opts: { multiline?: boolean; showsUnlessEmpty?: boolean } = {},
): PropertyDecorator {
  const multiline = opts.multiline === true;
  const mustShow = (value: string) =>
    multiline ? opts.showsUnlessEmpty === true && value !== '' : true;
  return ValidateBy({
    name: 'plainText',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' ||
        (!HIDDEN.test(multiline ? value.replace(/[\t\n\r]/g, '') : value) &&
          (multiline || !LINE_BREAKING.test(value)) &&
          (!mustShow(value) || SHOWS.test(value))),
      defaultMessage: (args) =>
        multiline
          ? `${args?.property ?? 'value'} must be visible text: no control characters but line breaks and tabs, no bidirectional overrides or byte order mark${opts.showsUnlessEmpty === true ? ', empty or not only spaces and invisible characters' : ''}`
          : `${args?.property ?? 'value'} must be one line of visible text: no control characters, line or paragraph separators, bidirectional overrides or byte order mark, not only spaces or invisible characters`,
    },
  });
}

/** Whether a text holds at least one character that shows (see {@link SHOWS}). */
export function showsSomething(value: string): boolean {
  return SHOWS.test(value);
}

/**
 * Multi-line text that must show something (a comment): PlainText({multiline: true}) lets an
 * empty or blank note through, which a comment may not be.
 */
export function ShowsSomething(): PropertyDecorator {
  return ValidateBy({
    name: 'showsSomething',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || showsSomething(value),
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} must show something: not only spaces, line breaks or invisible characters`,
    },
  });
}

/**
 * A length counted in characters (Unicode code points), as people count them: an emoji outside
 * the Basic Multilingual Plane is one, where class-validator's Length counts two UTF-16 units.
 * Combining marks count on their own (é written e + U+0301 is two).
 */
export function CodePointLength(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'codePointLength',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string') return true;
        const n = [...value].length;
        return n >= min && n <= max;
      },
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} must be ${min}..${max} characters (Unicode code points)`,
    },
  });
}

/**
 * An optional body field that `null` clears: absent or null skip its validators (the service
 * reads null as "clear it"). For fields where null means nothing, use {@link OptionalField}.
 */
export function NullableField(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null);
}

/**
 * The email addresses the service takes: a dot-atom local part (RFC 5322 atext, no leading,
 * trailing or double dot) and a host name with a top-level domain of letters (or IDNA xn--),
 * plain ASCII. One regular expression, so the OpenAPI document states it as the same `pattern`.
 */
export const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

/** An email address field ({@link EMAIL}); pair it with MaxLength(320). */
export function Email(): PropertyDecorator {
  return Matches(EMAIL, {
    message: (args) => `${args.property} must be an email address (name@example.com)`,
  });
}
