"""The EKS network component: a new VPC (subnets per AZ ID, NAT, S3 endpoint) or the given one.

Thin: ``infra.core.eks.network.EksNetworkPlan`` decides every subnet, route and NAT gateway.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from infra.core.eks.network import EksNetworkPlan


class EksNetwork(pulumi.ComponentResource):
    """A VPC with a private and a public subnet per AZ ID, NAT gateway(s) and an S3 endpoint,
    or the given subnets. Subnets are created by AZ *ID* (not name): the plan filtered by ID."""

    subnets: dict[str, pulumi.Input[str]]

    def __init__(
        self,
        name: str,
        plan: EksNetworkPlan,
        cluster_name: str,
        opts: pulumi.ResourceOptions | None = None,
        *,
        private_tags: Mapping[str, str] | None = None,
        vpc_tags: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__("gpu-infra:aws:Network", name, None, opts)
        self._private_tags = dict(private_tags or {})
        self._vpc_tags = dict(vpc_tags or {})
        self.subnets = {}
        vpc_id: pulumi.Input[str] | None = plan.vpc_id
        # What the plan keeps of the running network (live.apply_observed: the NAT gateway's AZ,
        # the control plane's AZs), and how to move it.
        for note in plan.notes:
            pulumi.log.warn(note, resource=self)
        if plan.create:
            vpc_id = self._create(name, plan, cluster_name)
        else:
            self.subnets = dict(plan.private_subnets)
        self.vpc_id = vpc_id
        self.register_outputs({"vpcId": vpc_id, "subnets": self.subnets})

    def _create(self, name: str, plan: EksNetworkPlan, cluster_name: str) -> pulumi.Output[str]:
        """The VPC, its public side (IGW, NAT), private route tables, S3 endpoint, private subnets."""
        assert plan.cidr is not None
        child = pulumi.ResourceOptions(parent=self)
        owned = {f"kubernetes.io/cluster/{cluster_name}": "shared"}
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            aws.ec2.VpcArgs(
                cidr_block=plan.cidr,
                enable_dns_hostnames=True,  # EKS private endpoint and nodes need DNS names
                enable_dns_support=True,
                tags={"Name": f"{cluster_name}-vpc", **self._vpc_tags},
            ),
            opts=child,
        )
        nats = self._public(name, plan, cluster_name, vpc.id, owned)
        private_rts: dict[str, aws.ec2.RouteTable] = {}
        for az in sorted(set(plan.nat_az_ids)):
            private_rts[az] = aws.ec2.RouteTable(
                f"{name}-private-{az}",
                aws.ec2.RouteTableArgs(
                    vpc_id=vpc.id,
                    routes=[
                        aws.ec2.RouteTableRouteArgs(
                            cidr_block="0.0.0.0/0", nat_gateway_id=nats[az].id
                        )
                    ],
                ),
                opts=child,
            )
        if plan.s3_gateway_endpoint:
            # Gateway endpoints carry no data charge; S3 traffic (ECR image layers) skips NAT
            # (https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-s3.html).
            aws.ec2.VpcEndpoint(
                f"{name}-s3",
                aws.ec2.VpcEndpointArgs(
                    vpc_id=vpc.id,
                    service_name=f"com.amazonaws.{plan.region}.s3",
                    vpc_endpoint_type="Gateway",
                    route_table_ids=[rt.id for rt in private_rts.values()],
                ),
                opts=child,
            )
        for az, cidr in plan.subnet_cidrs.items():
            subnet = self._subnet(
                f"{name}-{az}",
                vpc.id,
                az,
                cidr,
                {
                    "Name": f"{cluster_name}-private-{az}",
                    "kubernetes.io/role/internal-elb": "1",
                    **owned,
                    **self._private_tags,
                },
                private_rts[plan.nat_for(az)].id,
            )
            self.subnets[az] = subnet.id
        return vpc.id

    def _public(
        self,
        name: str,
        plan: EksNetworkPlan,
        cluster_name: str,
        vpc_id: pulumi.Output[str],
        owned: dict[str, str],
    ) -> dict[str, aws.ec2.NatGateway]:
        """The internet gateway, public subnets and their NAT gateways (by AZ ID)."""
        child = pulumi.ResourceOptions(parent=self)
        igw = aws.ec2.InternetGateway(
            f"{name}-igw", aws.ec2.InternetGatewayArgs(vpc_id=vpc_id), opts=child
        )
        public_rt = aws.ec2.RouteTable(
            f"{name}-public",
            aws.ec2.RouteTableArgs(
                vpc_id=vpc_id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            ),
            opts=child,
        )
        nats: dict[str, aws.ec2.NatGateway] = {}
        for az, cidr in plan.public_cidrs.items():
            # Internet-facing load balancers go here, internal ones in the private subnets
            # (AWS Load Balancer Controller subnet discovery by role tag,
            # https://docs.aws.amazon.com/eks/latest/userguide/network-load-balancing.html).
            public = self._subnet(
                f"{name}-public-{az}",
                vpc_id,
                az,
                cidr,
                {"Name": f"{cluster_name}-public-{az}", "kubernetes.io/role/elb": "1", **owned},
                public_rt.id,
            )
            if az in plan.nat_az_ids:
                eip = aws.ec2.Eip(f"{name}-nat-{az}", aws.ec2.EipArgs(domain="vpc"), opts=child)
                nats[az] = aws.ec2.NatGateway(
                    f"{name}-nat-{az}",
                    aws.ec2.NatGatewayArgs(allocation_id=eip.id, subnet_id=public.id),
                    # "it is recommended to denote that the NAT Gateway depends on the Internet
                    # Gateway for the VPC" (terraform-provider-aws aws_nat_gateway docs).
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                )
        return nats

    def _subnet(
        self,
        name: str,
        vpc_id: pulumi.Input[str],
        az_id: str,
        cidr: str,
        tags: dict[str, str],
        route_table_id: pulumi.Input[str],
    ) -> aws.ec2.Subnet:
        """A subnet in one AZ ID, associated with its route table (both named ``name``)."""
        child = pulumi.ResourceOptions(parent=self)
        subnet = aws.ec2.Subnet(
            name,
            aws.ec2.SubnetArgs(
                vpc_id=vpc_id, cidr_block=cidr, availability_zone_id=az_id, tags=tags
            ),
            opts=child,
        )
        aws.ec2.RouteTableAssociation(
            name,
            aws.ec2.RouteTableAssociationArgs(subnet_id=subnet.id, route_table_id=route_table_id),
            opts=child,
        )
        return subnet
