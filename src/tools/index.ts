/**
 * Public surface of src/tools: the workspace tool host, its backends, the path guard, the
 * permission policy and the session modes.
 */
export type { CommandBackend, CommandOutcome, CommandRequest, FileBackend, ReadWindow } from './backends.js';
export { FileTooLargeError } from './backends.js';
export { createLocalCommandBackend, type LocalCommandOptions } from './local-command.backend.js';
export { createLocalFileBackend } from './local-file.backend.js';
export { DEFAULT_MODE_ID, isSessionModeId, SESSION_MODES, type SessionMode, type SessionModeId } from './modes.js';
export { PathGuard, type GuardedPath } from './path-guard.js';
export { createPermissionPolicy, modePermissionPolicy } from './permission.policy.js';
export { DEFAULT_LIMITS, type ToolLimits } from './tool.js';
export { createWorkspaceTools, type WorkspaceToolsOptions } from './workspace-tools.js';
export { withExtraTools, type ExtraTools } from './extra-tools.js';
export { mcpServersOf, type McpServerConfig } from './mcp/mcp-servers.js';
