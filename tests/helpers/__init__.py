"""What several test modules share: a fake clock, an OpenAI-compatible server on 127.0.0.1, job
polling, a Streamlit server launcher, and builders of small workspaces and runs. Test modules
import from here, never from one another."""
