/**
 * A deliberately small JSON Schema checker for tool inputs: exactly the subset the built-in
 * tools' schemas use (an object of string / integer / boolean properties with bounds, `required`,
 * `additionalProperties: false`). Keeping the subset closed means a schema using anything else is
 * a programming error, caught by the unit tests, rather than a silently ignored keyword.
 */
import { TroupeError } from '../core/errors.js';

export interface PropertySchema {
  type: 'string' | 'integer' | 'boolean';
  description: string;
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
export function validateInput(tool: string, schema: ObjectSchema, input: unknown): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail(tool, 'the arguments must be a JSON object.');
  const record = input as Record<string, unknown>;
  for (const name of schema.required) {
    if (record[name] === undefined) fail(tool, `"${name}" is required.`);
  }
  for (const [name, value] of Object.entries(record)) {
    const prop = schema.properties[name];
    if (!prop) fail(tool, `unknown property "${name}" (allowed: ${Object.keys(schema.properties).join(', ')}).`);
    if (value === undefined) continue;
    switch (prop.type) {
      case 'string':
        if (typeof value !== 'string') fail(tool, `"${name}" must be a string.`);
        if (prop.minLength !== undefined && value.length < prop.minLength) fail(tool, `"${name}" must have at least ${prop.minLength} character(s).`);
        if (prop.maxLength !== undefined && value.length > prop.maxLength) fail(tool, `"${name}" must have at most ${prop.maxLength} characters.`);
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
