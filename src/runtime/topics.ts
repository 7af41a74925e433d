import type { Config } from '@oclif/core'

/** The topics of the built-in commands, described once here so that no tool has to declare them. */
export const BUILTIN_TOPICS: Readonly<Record<string, string>> = {
  job: 'Async jobs: list them, read their status and result, cancel one, run the worker',
}

/**
 * Give every topic its own description. oclif labels a topic nobody described with the summary of its first
 * command (`job` read "Cancel an async job"); here a topic keeps the description the tool declared
 * (`oclif.topics` in package.json) or the summary of the command that has the topic's own id, else takes the
 * built-ins' description, else one naming its commands.
 */
export function describeTopics(config: Pick<Config, 'topics' | 'commands' | 'pjson' | 'topicSeparator'>): void {
  const declared = (config.pjson.oclif?.topics ?? {}) as Record<string, { description?: string } | undefined>
  const ids = new Set(config.commands.map((c) => c.id))
  for (const topic of config.topics) {
    if (declared[topic.name]?.description || ids.has(topic.name)) continue
    const builtin = BUILTIN_TOPICS[topic.name]
    const under = config.commands
      .filter((c) => !c.hidden && c.id.startsWith(`${topic.name}:`))
      .map((c) => c.id.slice(topic.name.length + 1).replaceAll(':', config.topicSeparator ?? ':'))
      .sort()
    topic.description = builtin ?? `Commands: ${under.join(', ')}`
  }
}
