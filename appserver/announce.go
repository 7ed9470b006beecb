package appserver

// answerThenAll answers c with res and then tells every initialized
// connection n, as Codex does for a change of a thread that no listener
// projects (archive, unarchive, a stored thread's name, delete, revert).
//
// The caller's connection gets n right behind the answer, with nothing
// between them: a client may send its next request the moment it reads
// the answer (a thread/resume after thread/unarchive), and that request
// runs beside this handler, so without the session's order lock the
// next request's notifications (the resume's warning) could go out
// before n. Codex sends them in request order. The other connections
// are told afterwards, each under its own lock, never two at once.
func (s *Server) answerThenAll(c *call, res any, n *note) {
	c.sess.order.Lock()
	c.respond(res, nil)
	c.sess.sendOrdered(n)
	c.sess.order.Unlock()
	if h := s.announceHook.Load(); h != nil {
		(*h)(n.method)
	}
	for _, sess := range s.initializedSessions() {
		if sess != c.sess {
			sess.send(n)
		}
	}
}
