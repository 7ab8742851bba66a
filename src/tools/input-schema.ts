/**
 * A deliberately small JSON Schema checker for tool inputs: exactly the subset the built-in
 * tools' schemas use (an object of string / integer / boolean properties with bounds and enums,
 * arrays of such objects, `required`, `additionalProperties: false`). Keeping the subset closed means a schema using anything else is
 * a programming error, caught by the unit tests, rather than a silently ignored keyword.
 */
import { TroupeError } from '../core/errors.js';

export interface PropertySchema {
  type: 'string' | 'integer' | 'boolean' | 'array';
  description?: string;
  enum?: string[];
  /** For arrays: every item is an object of this shape. */
  items?: ObjectSchema;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, PropertySchema>;
  required: string[];
  additionalProperties: false;
}

function fail(tool: string, message: string): never {
  throw new TroupeError('invalid_params', `Invalid input for ${tool}: ${message}`, { tool });
}

/** Throws TroupeError `invalid_params` naming the first property that does not fit `schema`. */
export function validateInput(tool: string, schema: ObjectSchema, input: unknown, at = ''): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail(tool, at ? `"${at}" must be an object.` : 'the arguments must be a JSON object.');
  const record = input as Record<string, unknown>;
  for (const key of schema.required) {
    if (record[key] === undefined) fail(tool, `"${at}${key}" is required.`);
  }
  for (const [key, value] of Object.entries(record)) {
    const name = `${at}${key}`;
    // Own properties only: `constructor`, `toString` or `__proto__` would otherwise find
    // Object.prototype's members and pass a closed schema unchecked.
    const prop = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (!prop) fail(tool, `unknown property "${name}" (allowed: ${Object.keys(schema.properties).join(', ')}).`);
    if (value === undefined) continue;
    switch (prop.type) {
      case 'string':
        if (typeof value !== 'string') fail(tool, `"${name}" must be a string.`);
        if (prop.minLength !== undefined && value.length < prop.minLength) fail(tool, `"${name}" must have at least ${prop.minLength} character(s).`);
        if (prop.maxLength !== undefined && value.length > prop.maxLength) fail(tool, `"${name}" must have at most ${prop.maxLength} characters.`);
        if (prop.enum && !prop.enum.includes(value)) fail(tool, `"${name}" must be one of ${prop.enum.join(', ')}.`);
        break;
      case 'array':
        if (!Array.isArray(value)) fail(tool, `"${name}" must be an array.`);
        if (prop.maxItems !== undefined && value.length > prop.maxItems) fail(tool, `"${name}" must have at most ${prop.maxItems} items.`);
        value.forEach((item, i) => validateInput(tool, prop.items!, item, `${name}[${i}].`));
        break;
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value)) fail(tool, `"${name}" must be an integer.`);
        if (prop.minimum !== undefined && value < prop.minimum) fail(tool, `"${name}" must be at least ${prop.minimum}.`);
        if (prop.maximum !== undefined && value > prop.maximum) fail(tool, `"${name}" must be at most ${prop.maximum}.`);
        break;
      case 'boolean':
        if (typeof value !== 'boolean') fail(tool, `"${name}" must be true or false.`);
        break;
    }
  }
}
