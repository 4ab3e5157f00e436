package server

import (
	"context"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TemplateKeeper keeps a project's WorkflowTemplates, which runs of the
// project run by name as subworkflows; the embedded engine
// (internal/app) is one. Errors are coded: KLN-1xxx for a template that
// is not valid, KLN-4015 for one the project does not have.
type TemplateKeeper interface {
	// ApplyTemplates checks the templates of in.Files and stores them in
	// in.Project, all or none, and returns them as stored.
	ApplyTemplates(ctx context.Context, in apiv1.TemplateApply) ([]*apiv1.WorkflowTemplate, error)
	ListTemplates(ctx context.Context, project string) ([]*apiv1.WorkflowTemplate, error)
	GetTemplate(ctx context.Context, project, name string) (*apiv1.WorkflowTemplate, error)
	DeleteTemplate(ctx context.Context, project, name string) error
}

// applyTemplates stores the WorkflowTemplates of the files sent as a
// submission's are (multipart, one part per file, or one body; project
// as a field or ?project=), creating or replacing each.
func (s *Server) applyTemplates(w http.ResponseWriter, r *http.Request, p *principal) error {
	in, err := s.templateFiles(r, p)
	if err != nil {
		return err
	}
	return s.apply(w, r, in, func(out []*apiv1.WorkflowTemplate) (int, any) {
		return http.StatusOK, apiv1.TemplateList{Project: in.Project, Items: out}
	})
}

// putTemplate stores the one WorkflowTemplate of the body under the name
// in the path: 201 when it is new, 200 when it replaced one.
func (s *Server) putTemplate(w http.ResponseWriter, r *http.Request, p *principal) error {
	in, err := s.templateFiles(r, p)
	if err != nil {
		return err
	}
	in.Name = r.PathValue("name")
	return s.apply(w, r, in, func(out []*apiv1.WorkflowTemplate) (int, any) {
		t := out[0]
		if t.Status != nil && t.Status.CreatedAt.Equal(t.Status.UpdatedAt) {
			return http.StatusCreated, t
		}
		return http.StatusOK, t
	})
}

// templateFiles reads the files of a request to store templates, and the
// project they go to, checked against the caller.
func (s *Server) templateFiles(r *http.Request, p *principal) (apiv1.TemplateApply, error) {
	sub, err := submission(r)
	if err != nil {
		return apiv1.TemplateApply{}, err
	}
	if len(sub.Params) > 0 || sub.WorkDir != "" {
		return apiv1.TemplateApply{}, badRequest("a template is stored without params or workdir; they go with a run")
	}
	if sub.Project == "" {
		sub.Project = "default"
	}
	if !p.may(sub.Project) {
		if holdsQuotas(sub.Files) {
			return apiv1.TemplateApply{}, quotaForbidden
		}
		return apiv1.TemplateApply{}, forbidden("the token may not touch project %q", sub.Project)
	}
	return apiv1.TemplateApply{Files: sub.Files, Project: sub.Project}, nil
}

// apply checks and stores in's templates, as many at once as
// submissions are checked, and answers what answer makes of them.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, in apiv1.TemplateApply, answer func([]*apiv1.WorkflowTemplate) (int, any)) error {
	release, err := s.submits.acquire(r.Context())
	if err != nil {
		return err
	}
	defer release()
	out, err := s.cfg.Templates.ApplyTemplates(r.Context(), in)
	if err != nil {
		return err
	}
	status, body := answer(out)
	writeJSON(w, status, body)
	return nil
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	items, err := s.cfg.Templates.ListTemplates(r.Context(), project)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.TemplateList{Project: project, Items: nonNil(items)})
	return nil
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	t, err := s.cfg.Templates.GetTemplate(r.Context(), project, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	if err := s.cfg.Templates.DeleteTemplate(r.Context(), project, r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
