/**
 * `agentcli/internal`: what the built-in commands and the framework's own tools need and tool authors do not.
 * Not covered by semver: names here may change in any release.
 */

export { dryRunSchema } from './confirm/preview.js'
export { CORE_CATALOGUE } from './errors/catalogue.js'
export { GLOBAL_FLAGS } from './globals.js'
export { envPrefix } from './settings.js'
export { type EvidenceStatus, readToolSettings, type ToolSettings } from './tool-settings.js'
export { WRITE_FLAGS } from './write-command.js'
