import { describe, expect, it } from 'vitest'
import { lazyNamespaces } from '../../../src/build/lazy-namespaces.js'

// esbuild's unminified CommonJS output, in the shape lazyNamespaces reads: a comment per module, then its
// namespace, its hoisted functions and its initialiser.
const BUNDLE = `var init_a;
// src/a.js
var a_exports = {};
__export(a_exports, {
  default: () => A,
  "odd-name": () => odd
});
function odd() {
}
var A;
var init_a = __esm({
  "src/a.js"() {
    "use strict";
    init_b();
    A = 1;
  }
});

// src/b.js
var b_exports = {};
__export(b_exports, {
  b: () => b
});
var b;
var init_b = __esm({
  "src/b.js"() {
    b = 2;
  }
});

// entry.js
var entry_exports = {};
__export(entry_exports, {
  run: () => run
});
module.exports = __toCommonJS(entry_exports);
init_a();
`

describe('namespaces built by their module’s initialiser', () => {
  const out = lazyNamespaces(BUNDLE)

  it('moves each namespace into its own module’s initialiser, first (after "use strict")', () => {
    expect(out).toContain(`  "src/a.js"() {
    "use strict";
__export(a_exports, {
  default: () => A,
  "odd-name": () => odd
});
    init_b();`)
    expect(out).toContain(`  "src/b.js"() {
__export(b_exports, {
  b: () => b
});
    b = 2;`)
    expect(out.match(/__export\(/g)).toHaveLength(3)
  })

  it('leaves a namespace whose module has no initialiser (the entry) where it is', () => {
    expect(out).toContain(`var entry_exports = {};
__export(entry_exports, {
  run: () => run
});
module.exports = __toCommonJS(entry_exports);`)
  })

  it('runs as before: a namespace is filled when its module is initialised, before what it imports', () => {
    const run = (text: string) => {
      const seen: string[] = []
      const module = { exports: {} as Record<string, unknown> }
      const __export = (target: object, all: Record<string, () => unknown>) => {
        seen.push(Object.keys(all).join(','))
        for (const [name, get] of Object.entries(all)) Object.defineProperty(target, name, { get, enumerable: true })
      }
      const __esm = (fn: Record<string, () => void>) => {
        let done = false
        return () => {
          if (done) return
          done = true
          Object.values(fn)[0]!()
        }
      }
      const __toCommonJS = (ns: object) => ({ ...ns })
      new Function('module', '__export', '__esm', '__toCommonJS', 'run', text)(module, __export, __esm, __toCommonJS, 0)
      return seen
    }
    expect(run(BUNDLE)).toEqual(['default,odd-name', 'b', 'run'])
    expect(run(out)).toEqual(['run', 'default,odd-name', 'b'])
  })

  it('leaves text without a namespace as it is, and fails on a namespace whose initialiser comes before it', () => {
    expect(lazyNamespaces('var x = 1;\n// src/x.js\n')).toBe('var x = 1;\n// src/x.js\n')
    const late = `var init_c = __esm({\n  "src/c.js"() {\n  }\n});\n// src/c.js\n__export(c_exports, {\n  c: () => c\n});\n`
    expect(() => lazyNamespaces(late)).toThrow(/no initialiser after the namespace of "src\/c.js"/)
  })
})
