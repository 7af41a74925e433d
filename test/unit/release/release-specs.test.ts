import { describe, expect, it } from 'vitest'
import { isRegistrySpec, nonRegistryDependencies } from '../../../src/release/_specs.js'

describe('what a staged release install can resolve from the registry', () => {
  it('accepts versions, ranges, npm: aliases and dist-tags', () => {
    for (const spec of [
      '1.2.3',
      '^0.1.0',
      '~5.1',
      '>=1 <2',
      '*',
      '',
      'latest',
      'next',
      'npm:semver@^7',
      'npm:@a/b@1.0.0',
    ])
      expect(isRegistrySpec(spec), spec).toBe(true)
  })

  it('refuses local paths, links, workspaces, git, GitHub shorthand and URLs', () => {
    for (const spec of [
      'file:../..',
      'file:agentcli-0.1.0.tgz',
      'link:../x',
      'workspace:*',
      'workspace:^',
      'portal:../x',
      '../x',
      './x',
      '/abs/x',
      '~/x',
      'github:owner/repo',
      'owner/repo',
      'git+https://github.com/owner/repo.git',
      'git@github.com:owner/repo.git',
      'https://example.com/x.tgz',
      'npm:x@file:../y',
    ])
      expect(isRegistrySpec(spec), spec).toBe(false)
  })

  it('lists the offenders among dependencies and optionalDependencies, not devDependencies', () => {
    expect(
      nonRegistryDependencies({
        dependencies: { agentcli: 'file:../..', ok: '^1.0.0' },
        optionalDependencies: { native: 'github:o/native' },
        devDependencies: { local: 'file:../dev' },
      } as never),
    ).toEqual(['agentcli@file:../..', 'native@github:o/native'])
  })
})
