import { join } from 'node:path'

/**
 * The environment of a build-time run of the tool (its compact reference, its help): nothing of the builder's but
 * `PATH`, and a home of its own that is thrown away after it, so no code cache is written at its exit either.
 */
export function probeEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    AGENTCLI_CODE_CACHE: '0',
  }
}
