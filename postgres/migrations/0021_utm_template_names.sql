-- UTM template names clash as link.SameTemplateName folds them (Unicode
-- simple case folding), which lower() does not: under the C collation it
-- lowers ASCII only ("Café" and "CAFÉ" both passed), under others it maps
-- more ("İ" to "i"). The check is linkbolt's, made under the lock of the
-- workspace's row that every creation and rename takes.
DROP INDEX utm_templates_name;
CREATE INDEX utm_templates_workspace ON utm_templates (workspace_id);
