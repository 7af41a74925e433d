/**
 * The commands of `tasks`, for oclif's explicit command strategy: the tool's own and the built-ins, so one bundle
 * (`dist/bundle.cjs`, written by `agentcli-build`) holds the tool, the framework and oclif once each.
 */

import type { CommandClass } from 'agentcli'
import { COMMANDS as BUILTINS } from 'agentcli/builtins'
import Create from './commands/create.js'
import Delete from './commands/delete.js'
import EditTask from './commands/edit.js'
import Export from './commands/export.js'
import Get from './commands/get.js'
import Import from './commands/import.js'
import List from './commands/list.js'
import LoginApprove from './commands/login/approve.js'
import LoginResume from './commands/login/resume.js'
import Login from './commands/login.js'
import Logout from './commands/logout.js'
import Show from './commands/show.js'
import Sync from './commands/sync.js'
import Whoami from './commands/whoami.js'

/** Every command of the tool by id. */
export const COMMANDS: Readonly<Record<string, CommandClass>> = {
  ...BUILTINS,
  create: Create,
  delete: Delete,
  edit: EditTask,
  export: Export,
  get: Get,
  import: Import,
  list: List,
  login: Login,
  'login:approve': LoginApprove,
  'login:resume': LoginResume,
  logout: Logout,
  show: Show,
  sync: Sync,
  whoami: Whoami,
}
