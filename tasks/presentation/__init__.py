"""What people read: table formatting, HTML reports, the `rubricflow view` web app."""
