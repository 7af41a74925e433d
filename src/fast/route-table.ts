/*
 * The fast path's route table (`dist/fast-routes.json`), written by `agentcli-build` and read by `agentcli/boot`
 * (`./boot.ts`, which also holds the look-up: one module less on every start). The file is JSON laid out one id
 * and one route per line (`src/build/fast-routes.ts` `tableText`), so a start finds its route by searching the
 * text for that line instead of parsing the whole table: its cost does not grow with the number of commands.
 */

/** One command the build proved simple: its flags and args as declared (for people reading the table). */
export type FastRoute = { flags: string[]; args: string[] }

/** What `dist/fast-routes.json` holds. */
export type RouteTable = {
  format: 2
  /** Every command id of the tool and every alias: a longer id that is not a fast route wins over a shorter one. */
  ids: string[]
  /** The commands proven simple, by id. */
  routes: Record<string, FastRoute>
}
