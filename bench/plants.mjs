// The benchmarks' plants, in one place so that the seeded rows and the page the floors of
// bench/floor-servers.mjs answer from memory stay the same. No imports: the floor servers
// load this, and their RSS is measured.

/** Team `team<n>`'s first `count` plants as [team, id, name, tag] rows; every third has no tag. */
export function plantRows(n, count) {
  return Array.from({ length: count }, (_, j) => [`team${n}`, j + 1, `Plant ${j + 1} of team ${n}`, j % 3 ? 'green' : null]);
}
