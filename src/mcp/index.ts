/** The mcp barrel (internal: not an entry point of the package): a tool's commands as MCP tools (`tool mcp`). Importing it loads the MCP SDK only when serving. */
export { type ToolHints, toolAnnotations } from './annotations.js'
export { toArgv } from './argv.js'
export { type ServeOptions, serveMcp } from './server.js'
export { argName, inputSchemaOf, outputSchemaOf, type ToolDef, toolDefs, toolName } from './tools.js'
