/** agentcli/testing: helpers for tool authors' tests. */
export { type ContractViolation, envelopeViolations } from './envelope.js'
export { coverage, enforceFcc, type FccOptions, type FccReport, fccGuard, invokes } from './fcc.js'
export { type RunToolOptions, runTool, type Sandbox, sandbox, type ToolRun } from './run-tool.js'
