/** oclif's logger, for the modules the fast bundle keeps: its parser debugs only under `CLI_FLAGS_DEBUG=1`. */
export function makeDebug(..._scope: string[]): (...args: unknown[]) => void {
  return () => {}
}
