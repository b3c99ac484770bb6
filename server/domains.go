package server

// domainRoutes registers the routes of custom domains.
func (s *Server) domainRoutes() {}
