// Validates events against the committed spec/events.schema.json (not the zod source), so the
// spec a client reads is the one the tests hold troupe to.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

const schema = JSON.parse(readFileSync(new URL('../../../spec/events.schema.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(schema);

/** Returns a description of why `event` breaks the schema, or undefined if it conforms. */
export function eventSchemaError(event: unknown): string | undefined {
  if (validate(event)) return undefined;
  return `${JSON.stringify(event)}: ${ajv.errorsText(validate.errors)}`;
}
