/**
 * The built-in Liquid mail templates, by `<name>.<part>`. Parts: `subject` (one line), `text`, and
 * optionally `html` (rendered with HTML escaping on). An operator overrides any of them with a file
 * `<alerts.mailTemplatesDir>/<name>.<part>.liquid`. Variables are listed in docs/alerts.md.
 */
export const BUILTIN_TEMPLATES: Record<string, string> = {
  'password-reset.subject': 'Reset your gslbd password',
  'password-reset.text': `Hello{% if displayName %} {{ displayName }}{% endif %},

someone asked to reset the password of the gslbd account {{ email }}.
To choose a new password, open this link within {{ expiresInMinutes }} minutes:

{{ link }}

If you did not ask for this, ignore this message; your password stays as it is.

-- gslbd on {{ node }}
`,
  'password-reset.html': `<p>Hello{% if displayName %} {{ displayName }}{% endif %},</p>
<p>someone asked to reset the password of the gslbd account <b>{{ email }}</b>.
To choose a new password, open this link within {{ expiresInMinutes }} minutes:</p>
<p><a href="{{ link }}">{{ link }}</a></p>
<p>If you did not ask for this, ignore this message; your password stays as it is.</p>
<p>-- gslbd on {{ node }}</p>
`,
  'alert-health.subject': `{% if count == 1 %}{% assign e = events[0] %}[gslbd] {% if e.healthy %}RECOVERED{% else %}DOWN{% endif %}: {{ e.ipAddress }} in pool {{ e.poolId }}{% else %}[gslbd] {{ count }} health changes: {{ down }} down, {{ up }} recovered{% endif %}`,
  'alert-health.text': `Health changes seen by gslbd on {{ node }}:

{% for e in events %}- {{ e.time }}  pool {{ e.poolId }}  member {{ e.ipAddress }}  is now {% if e.healthy %}HEALTHY{% else %}UNHEALTHY{% endif %} (reported by {{ e.node }})
  serving commit {{ e.appliedCommit | default: "none" }}{% if e.secondsSinceApply != nil %}, applied {{ e.secondsSinceApply }} s before{% endif %}
{% endfor %}`,
  'alert-gitops.subject': `{% if count == 1 %}[gslbd] GitOps revision {{ events[0].shortRevision }} rejected: {{ events[0].reason }}{% else %}[gslbd] {{ count }} GitOps revisions rejected{% endif %}`,
  'alert-gitops.text': `gslbd on {{ node }} refused a configuration revision; the running state is unchanged.

{% for e in events %}- {{ e.time }}  revision {{ e.revision }}  reason {{ e.reason }}
  {{ e.message }}
  still serving commit {{ e.appliedCommit | default: "none" }}{% if e.secondsSinceApply != nil %}, applied {{ e.secondsSinceApply }} s before{% endif %}
{% endfor %}`,
  'alert-change.subject': `{% if count == 1 %}[gslbd] GitOps revision {{ events[0].shortRevision }} applied{% else %}[gslbd] {{ count }} GitOps revisions applied{% endif %}`,
  'alert-change.text': `gslbd on {{ node }} applied configuration revisions:

{% for e in events %}- {{ e.time }}  revision {{ e.revision }}  creates={{ e.creates }} updates={{ e.updates }} deletes={{ e.deletes }}
{% endfor %}`,
  'alert-rollback.subject': `{% if count == 1 %}{% assign e = events[0] %}[gslbd] GitOps revision {{ e.shortRevision }} {% if e.rolledBackTo %}rolled back to {{ e.shortRolledBackTo }}{% else %}breached; not rolled back{% endif %}{% else %}[gslbd] {{ count }} GitOps revisions breached after their apply{% endif %}`,
  'alert-rollback.text': `gslbd on {{ node }} watched a configuration revision after its apply, and it breached:

{% for e in events %}- {{ e.time }}  revision {{ e.revision }}
  breach: {{ e.reason }}
  {% if e.rolledBackTo %}rolled back to {{ e.rolledBackTo }} (creates={{ e.creates }} updates={{ e.updates }} deletes={{ e.deletes }}); the bad revision is pinned out until a newer commit{% else %}{{ e.message }}{% endif %}
  now serving commit {{ e.appliedCommit | default: "none" }}
{% endfor %}`,
  'test.subject': 'gslbd test message',
  'test.text': `This is a test message from gslbd on {{ node }}, sent with the mail settings from {{ source }} ({{ server }}).
If you can read it, gslbd can send password-reset mail and alerts.
`,
};
