/** The JSON Schema of AgentEvent, generated from the zod schemas (the committed copy is spec/events.schema.json). */
import * as z from 'zod';
import { AgentEvent } from './events.js';

export function eventJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://troupe.dev/spec/events.schema.json',
    title: 'AgentEvent',
    description: 'One event of a troupe session log. Generated from src/core/events.ts; see spec/events.md.',
    ...(z.toJSONSchema(AgentEvent, { target: 'draft-2020-12' }) as Record<string, unknown>),
  };
}
