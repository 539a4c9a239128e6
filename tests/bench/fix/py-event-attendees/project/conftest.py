# Lets the checks import the modules at the project root.
