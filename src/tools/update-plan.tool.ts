/**
 * update_plan: the model's plan for the task, shown by clients as a checklist (ACP `plan`). Each call
 * sends the complete list; the previous one is replaced.
 */
import type { PlanEntry } from '../core/events.js';
import { defineTool, textResult, type ToolDefinition } from './tool.js';

interface UpdatePlanInput {
  entries: PlanEntry[];
}

const MAX_ENTRIES = 50;
/** A step is a line or two: the whole plan (every entry) is one event of the log, at most 1 MiB. */
const MAX_ENTRY_LENGTH = 2000;

export function updatePlanTool(): ToolDefinition {
  return defineTool<UpdatePlanInput>({
    name: 'update_plan',
    description:
      'Publish your plan for the task as a checklist the person can follow. Send the complete list every time ' +
      `(it replaces the previous one), at most ${MAX_ENTRIES} entries; mark entries in_progress and completed as you go.`,
    schema: {
      type: 'object',
      properties: {
        entries: {
          type: 'array',
          description: 'The complete plan, in order.',
          maxItems: MAX_ENTRIES,
          items: {
            type: 'object',
            properties: {
              content: { type: 'string', minLength: 1, maxLength: MAX_ENTRY_LENGTH, description: 'What this step does.' },
              priority: { type: 'string', enum: ['high', 'medium', 'low'] },
              status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
            },
            required: ['content', 'priority', 'status'],
            additionalProperties: false,
          },
        },
      },
      required: ['entries'],
      additionalProperties: false,
    },
    kind: 'think',
    access: 'read',

    describe(input) {
      const done = input.entries.filter((e) => e.status === 'completed').length;
      return { title: `Plan: ${done}/${input.entries.length} done`, locations: [] };
    },

    async run(input) {
      const lines = input.entries.map((e) => `[${e.status === 'completed' ? 'x' : e.status === 'in_progress' ? '~' : ' '}] ${e.content}`);
      return { ...textResult(`Plan updated:\n${lines.join('\n')}`), plan: input.entries };
    },
  });
}
