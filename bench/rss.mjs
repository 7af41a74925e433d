// Preloaded with --import: report this process's peak RSS on stderr as it exits (the bench reads it).
process.on('exit', () => process.stderr.write(`\nmax_rss_kb=${process.resourceUsage().maxRSS}\n`))
