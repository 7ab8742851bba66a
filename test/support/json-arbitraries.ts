/**
 * fast-check arbitraries for code that measures, writes or reads JSON text itself (json-bytes,
 * json-slices): strings dense in what JSON escapes or encodes in several bytes (quotes, backslashes,
 * control characters, multi-byte and astral characters, lone surrogates, the letters of a `\u`
 * escape), and values of every kind JSON.stringify meets, those it leaves out (undefined) and those
 * with toJSON (Date) included.
 */
import fc from 'fast-check';

const UNITS = ['a', '"', '\\', '/', '\n', '\b', '\u0001', '\u007f', 'é', '€', '😀', '\ud800', '\udc00', 'u', '0'];

export const jsonHardText = (maxLength: number) =>
  fc.string({ unit: fc.oneof(fc.constantFrom(...UNITS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength });

/** Nested values whose strings are `text` and whose object keys are `key`. */
export const jsonishValue = (text: fc.Arbitrary<string>, key: fc.Arbitrary<string> = text): fc.Arbitrary<unknown> =>
  fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(key, tie('value'), { maxKeys: 5 }),
      fc.date({ noInvalidDate: true }),
    ),
  })).value;
