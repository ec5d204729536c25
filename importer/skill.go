package importer

import "fmt"

// SkillFile is the file that makes a folder a skill (Agent Skills format, docs/format.md
// "skills/<name>/SKILL.md").
const SkillFile = "SKILL.md"

// skillInfo is what parseSkill reads from a SKILL.md.
type skillInfo struct {
	Name        string // front-matter name, "" when absent
	Description string
	Warnings    []string
}

// parseSkill reads the front matter of a SKILL.md with yaml.v3: "name" and "description"; any other
// keys are kept as they are (docs/format.md "Files"). Invalid YAML is not fatal; see
// parseFrontMatter.
func parseSkill(content []byte) skillInfo {
	var info skillInfo
	fm, _ := parseFrontMatter(content)
	if fm.warning != "" {
		info.Warnings = append(info.Warnings, fm.warning)
	}
	if !fm.present && fm.warning == "" {
		info.Warnings = append(info.Warnings, "no YAML front matter (no name, no description)")
		return info
	}
	info.Name = fm.get("name")
	info.Description = fm.get("description")
	if info.Description == "" {
		info.Warnings = append(info.Warnings, fmt.Sprintf("no %q in the front matter", "description"))
	}
	return info
}
