#!/usr/bin/env node
// Writes spec/events.schema.json from the zod schemas in src/core/events.ts (run after the build).
// A test fails when the committed file differs from what this would write.
import { writeFileSync } from 'node:fs';
import { eventJsonSchema } from '../dist/src/core/event-schema.js';

writeFileSync(new URL('../spec/events.schema.json', import.meta.url), JSON.stringify(eventJsonSchema(), null, 2) + '\n');
