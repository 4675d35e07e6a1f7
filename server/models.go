package server

import (
	"fmt"
	"net/http"

	"github.com/kiln-ai/kiln/server/wire"
)

func (s *Server) appendModel(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendJSONString(b, s.modelID)
	b = append(b, `,"object":"model","created":`...)
	b = wire.AppendInt(b, s.created.Unix())
	b = append(b, `,"owned_by":"kiln"`...)
	return append(s.appendModelMeta(b), '}')
}

// models serves GET /v1/models: the one served model.
func (s *Server) models(w http.ResponseWriter, _ *http.Request) error {
	b := append([]byte(`{"object":"list","data":[`), nil...)
	b = s.appendModel(b)
	return writeJSON(w, http.StatusOK, append(b, "]}\n"...))
}

// modelByID serves GET /v1/models/{id}.
func (s *Server) modelByID(w http.ResponseWriter, r *http.Request) error {
	if id := r.PathValue("id"); id != s.modelID {
		return &wire.Error{Status: http.StatusNotFound, Type: wire.TypeInvalidRequest, Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q does not exist", wire.Clip(id))}
	}
	return writeJSON(w, http.StatusOK, append(s.appendModel(nil), '\n'))
}
