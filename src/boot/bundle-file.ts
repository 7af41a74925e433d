/** Where `agentcli-build` writes a tool's bundle, relative to the tool's root. */
export const BUNDLE_FILE = 'dist/bundle.cjs'
