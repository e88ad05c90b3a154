"""Scale Workbench core: everything that is not a page. Never imports streamlit (except core/ui/)."""
