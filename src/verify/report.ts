/** One conformance check. */
export type Check = {
  id: string
  group:
    | 'envelope'
    | 'exit'
    | 'flags'
    | 'self'
    | 'write'
    | 'local'
    | 'interactive'
    | 'fuzz'
    | 'populate'
    | 'lists'
    | 'stdio'
    | 'mcp'
    | 'release'
  status: 'pass' | 'fail' | 'skip'
  evidence: string
}

/** Collects checks in the order they ran. */
export class Report {
  readonly checks: Check[] = []
  add(id: string, group: Check['group'], ok: boolean | 'skip', evidence: string): void {
    this.checks.push({ id, group, status: ok === 'skip' ? 'skip' : ok ? 'pass' : 'fail', evidence })
  }
  summary(): { pass: number; fail: number; skip: number; total: number } {
    const count = (s: Check['status']) => this.checks.filter((c) => c.status === s).length
    return { pass: count('pass'), fail: count('fail'), skip: count('skip'), total: this.checks.length }
  }
}
