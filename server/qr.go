package server

// qrRoutes registers the routes of QR codes.
func (s *Server) qrRoutes() {}
