"""The class server: access, seats, outbound, folders, secrets, connections, the deployment."""
