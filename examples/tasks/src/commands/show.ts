import Get from './get.js'

/** The old name of `get`, kept working until 1.0.0 so scripts written against it do not break at once. */
export default class Show extends Get {
  static override summary = 'Show one task (deprecated: use get)'
  static override examples = ['<%= config.bin %> show 1']
  static override state = 'deprecated'
  static override deprecationOptions = { to: 'tasks get', version: '1.0.0' }
}
