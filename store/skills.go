package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Skill is an Agent Skills SKILL.md (served by context://skills/{name}): Content is the whole file,
// byte for byte; Name and Description come from its front matter (the folder name when absent).
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Content     string `json:"content"`
	Scope       Scope  `json:"scope"`
}

// ParseSkill reads a SKILL.md. The description is read by ReadFrontMatter, the rule every path shares
// (import and its dry run, skill list, MCP): a BOM, invalid YAML or a repeated key keep the value the
// user sees.
func ParseSkill(name string, sc Scope, b []byte) Skill {
	fm, _ := ReadFrontMatter(b)
	return Skill{Name: name, Content: string(b), Scope: sc, Description: fm.Get("description")}
}

func skillPath(name string) string { return "skills/" + name + "/SKILL.md" }

// GetSkill reads a skill; *NotFoundError "Skill 'x' not found" when absent (docs/format.md "Not-found texts").
func (v *View) GetSkill(ctx context.Context, name string) (Skill, error) {
	if err := normKey(&name); err != nil {
		return Skill{}, err
	}
	b, sc, err := v.Read(ctx, skillPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, &NotFoundError{Msg: fmt.Sprintf("Skill '%s' not found", name)}
	}
	if err != nil {
		return Skill{}, err
	}
	return ParseSkill(name, sc, b), nil
}

// ListSkills lists every skill of every scope, ordered by name.
func (v *View) ListSkills(ctx context.Context) ([]Skill, error) {
	names, err := v.List(ctx, "skills")
	if err != nil {
		return nil, err
	}
	out := []Skill{}
	for _, n := range names {
		if !n.Dir {
			continue
		}
		b, sc, err := v.Read(ctx, skillPath(n.Name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ParseSkill(n.Name, sc, b))
	}
	return out, nil
}
