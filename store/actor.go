package store

// WithActor returns the same store (repository and configuration) writing as actor a: a server that
// serves several clients (MCP) records each one's agent in its commits. The copy shares the repository,
// so writes of both go through the same ref locks.
func (s *Store) WithActor(a Actor) *Store {
	if a.Machine == "" {
		a.Machine = s.Actor.Machine
	}
	if a.Agent == "" {
		a.Agent = s.Actor.Agent
	}
	return &Store{repo: s.repo, cfg: s.cfg, Actor: a, timeoutOverride: s.timeoutOverride, skels: s.skels, dirOK: s.dirOK}
}
